/**
 * Real EVM nodes for tests: `@foundry-rs/anvil` (a devDependency) started on 127.0.0.1, port 0.
 * The platform binary is run directly (not through the package's node wrapper), so stopping
 * the child stops the node. `anvilUnavailable()` says why a test cannot have one, for
 * `it.skipIf`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

function platformPackage(): string | undefined {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : undefined;
  if (arch === undefined || !['linux', 'darwin', 'win32'].includes(process.platform)) {
    return undefined;
  }
  return `@foundry-rs/anvil-${process.platform}-${arch}`;
}

/** The anvil binary, or why there is none. */
function locate(): { path: string } | { reason: string } {
  const pkg = platformPackage();
  if (pkg === undefined)
    return { reason: `no anvil build for ${process.platform}/${process.arch}` };
  const binary = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  try {
    const path = require.resolve(`${pkg}/bin/${binary}`);
    if (existsSync(path)) return { path };
  } catch {
    // fall through
  }
  return { reason: `${pkg} is not installed (npm install with optional dependencies)` };
}

const found = locate();

/** Why anvil cannot run here, or undefined when it can. */
export function anvilUnavailable(): string | undefined {
  return 'reason' in found ? found.reason : undefined;
}

export interface Anvil {
  readonly url: string;
  /** A JSON-RPC call straight to this node (not through cascade). */
  call(method: string, params?: unknown[]): Promise<unknown>;
  stop(): Promise<void>;
}

/** Starts one anvil node; resolves once it listens. */
export async function startAnvil(args: string[] = []): Promise<Anvil> {
  if (!('path' in found)) throw new Error(found.reason);
  // --max-persisted-states 0: anvil otherwise writes old block states under
  // ~/.foundry/anvil/tmp and leaves them there when stopped — gigabytes per mined range, which
  // filled a CI machine's disk. Tests read recent state only (anvil keeps that in memory).
  const child: ChildProcess = spawn(
    found.path,
    ['--host', '127.0.0.1', '--port', '0', '--max-persisted-states', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Listening on (127\.0\.0\.1:\d+)/.exec(out);
      if (match) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(`http://${match[1]}`);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.resume();
    child.once('exit', (code) =>
      reject(new Error(`anvil exited (${code}) before listening: ${out}`)),
    );
    child.once('error', reject);
  });
  let id = 0;
  return {
    url,
    async call(method, params = []) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      });
      const json = (await response.json()) as { result?: unknown; error?: unknown };
      if (json.error !== undefined) throw new Error(`${method}: ${JSON.stringify(json.error)}`);
      return json.result;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The block transaction `hash` was mined in, once it is. */
export async function minedIn(anvil: Anvil, hash: string): Promise<number> {
  for (;;) {
    const receipt = (await anvil.call('eth_getTransactionReceipt', [hash])) as {
      blockNumber: string;
    } | null;
    if (receipt !== null) return Number.parseInt(receipt.blockNumber, 16);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
