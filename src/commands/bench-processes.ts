/**
 * The processes a bench starts besides itself: the proxy as `node dist/cli.js serve` with a
 * temporary config (so its CPU and memory can be read from /proc, and NODE_EXTRA_CA_CERTS can
 * make its upstream pool trust a mock's self-signed certificate), and the mock nodes in a
 * forked child. Both are stopped by `close()`, which never throws.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StartupError } from '../core/index.js';
import type { MockNodeOptions } from '../mock/index.js';
import type { MockChildMessage } from './bench-mock-child.js';

const CLI_PATH = fileURLToPath(new URL('../cli.js', import.meta.url));
const MOCK_CHILD_PATH = fileURLToPath(new URL('./bench-mock-child.js', import.meta.url));
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const KEPT_LOG_LINES = 40;

/** The package root (config/ lives there). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One `[[nodes]]` entry of a bench config. */
export interface BenchNode {
  readonly name: string;
  readonly url: string;
  readonly tier: number;
  /** Omitted when Infinity (no limit). */
  readonly rpsLimit: number;
  readonly maxConcurrent: number;
  readonly pricingPath: string;
}

/**
 * A balancer config for the proxy under test: loopback, port 0, metrics on, no quotas.
 * `patient` sets budgets long enough that a slow moment (a cold TLS handshake on a busy
 * machine) is measured as latency rather than turned into a 502 by the 500 ms attempt deadline.
 */
export function benchConfigToml(nodes: readonly BenchNode[], patient = false): string {
  const lines = ['[server]', 'host = "127.0.0.1"', 'port = 0', 'enable_metrics = true'];
  if (patient) lines.push('request_timeout_ms = 10000', 'attempt_timeout_ms = 9000');
  lines.push('');
  for (const node of nodes) {
    lines.push(
      '[[nodes]]',
      `name = ${JSON.stringify(node.name)}`,
      `url = ${JSON.stringify(node.url)}`,
    );
    lines.push(`tier = ${node.tier}`);
    if (Number.isFinite(node.rpsLimit)) lines.push(`rps_limit = ${node.rpsLimit}`);
    if (Number.isFinite(node.maxConcurrent)) lines.push(`max_concurrent = ${node.maxConcurrent}`);
    lines.push(
      'monthly_limit = 0',
      `provider_pricing_path = ${JSON.stringify(node.pricingPath)}`,
      '',
    );
  }
  return lines.join('\n');
}

/** A running `cascade serve` child. */
export interface ProxyProcess {
  readonly url: string;
  readonly pid: number;
  /** Rewrites the config and sends SIGHUP; resolves once serve logs the reload. */
  reload(configToml: string): Promise<void>;
  close(): Promise<void>;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** The log of a child: a tail for error messages, and waiting for a line. */
class LogWatcher {
  readonly tail: string[] = [];
  readonly #waiting = new Set<(line: string) => void>();
  #pending = '';

  constructor(child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => this.#feed(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => this.#feed(chunk.toString()));
  }

  #feed(text: string): void {
    const lines = (this.#pending + text).split('\n');
    this.#pending = lines.pop() ?? '';
    for (const line of lines) {
      this.tail.push(line);
      if (this.tail.length > KEPT_LOG_LINES) this.tail.shift();
      for (const listener of [...this.#waiting]) listener(line);
    }
  }

  /** Resolves with what `pick` returns for the first line it accepts; rejects on timeout or exit. */
  waitFor<T>(child: ChildProcess, what: string, pick: (line: string) => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        cleanup();
        reject(
          new StartupError(`bench proxy (cascade serve) ${why}`, this.tail.join('\n').slice(-2000)),
        );
      };
      const timer = setTimeout(
        () => fail(`did not log ${what} within ${START_TIMEOUT_MS / 1000} s`),
        START_TIMEOUT_MS,
      );
      const onExit = (code: number | null) => fail(`exited (${code}) before logging ${what}`);
      const listener = (line: string) => {
        const value = pick(line);
        if (value === undefined) return;
        cleanup();
        resolve(value);
      };
      const cleanup = () => {
        clearTimeout(timer);
        child.off('exit', onExit);
        this.#waiting.delete(listener);
      };
      child.once('exit', onExit);
      this.#waiting.add(listener);
    });
  }
}

function messageOf(line: string): { msg: string; url?: unknown } | undefined {
  try {
    const parsed = JSON.parse(line) as { msg?: unknown; url?: unknown };
    return typeof parsed.msg === 'string' ? { msg: parsed.msg, url: parsed.url } : undefined;
  } catch {
    return undefined;
  }
}

/** The PEMs an inherited NODE_EXTRA_CA_CERTS names, so adding the mock's keeps them trusted. */
function inheritedExtraCas(file: string | undefined): string {
  if (!file) return '';
  try {
    const pems = readFileSync(file, 'utf8');
    return pems.endsWith('\n') ? pems : `${pems}\n`;
  } catch {
    return '';
  }
}

/**
 * Starts `cascade serve` on a temporary config; `extraCa` (PEM) is trusted by its upstream
 * pool through NODE_EXTRA_CA_CERTS.
 */
export async function startProxyProcess(
  configToml: string,
  extraCa?: string,
): Promise<ProxyProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cascade-bench-'));
  const configPath = path.join(dir, 'config.toml');
  writeFileSync(configPath, configToml);
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info' };
  delete env.CONFIG_PATH;
  if (extraCa) {
    const caPath = path.join(dir, 'upstream-ca.pem');
    writeFileSync(caPath, `${inheritedExtraCas(env.NODE_EXTRA_CA_CERTS)}${extraCa}`);
    env.NODE_EXTRA_CA_CERTS = caPath;
  }
  const child = spawn(
    process.execPath,
    [CLI_PATH, 'serve', '--config', configPath, '--quotas', path.join(dir, 'quotas.json')],
    { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const log = new LogWatcher(child);
  const close = async () => {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await log.waitFor(child, '"cascade serving"', (line) => {
      const message = messageOf(line);
      return message?.msg === 'cascade serving' && typeof message.url === 'string'
        ? message.url
        : undefined;
    });
    return {
      url,
      pid: child.pid!,
      async reload(next) {
        writeFileSync(configPath, next);
        const outcome = log.waitFor(child, '"config reloaded"', (line) => {
          const msg = messageOf(line)?.msg ?? '';
          if (msg.startsWith('config reloaded')) return 'ok';
          return msg.startsWith('config reload failed') ? msg : undefined;
        });
        child.kill('SIGHUP');
        const result = await outcome;
        if (result !== 'ok') throw new StartupError(`bench proxy: ${result}`);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** A running mock-node child. */
export interface MockProcess {
  readonly nodes: ReadonlyArray<{ name: string; url: string }>;
  /** CPU time the child has used so far, µs. */
  cpuMicros(): Promise<number>;
  close(): Promise<void>;
}

/** Forks the mock-node child and waits for its nodes' URLs. */
export async function startMockProcess(options: readonly MockNodeOptions[]): Promise<MockProcess> {
  const child = fork(MOCK_CHILD_PATH, [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T extends MockChildMessage['type']>(type: T) =>
    new Promise<Extract<MockChildMessage, { type: T }>>((resolve, reject) => {
      const onMessage = (message: MockChildMessage) => {
        if (message.type === 'failed')
          finish(new StartupError(`bench mock nodes: ${message.message}`));
        else if (message.type === type)
          finish(undefined, message as Extract<MockChildMessage, { type: T }>);
      };
      const onExit = (code: number | null) =>
        finish(new StartupError(`bench mock-node process exited (${code})`));
      function finish(err?: Error, message?: Extract<MockChildMessage, { type: T }>) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(message!);
      }
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const close = async () => {
    if (child.connected) child.disconnect();
    await stopChild(child);
  };
  try {
    const ready = await next('ready');
    return {
      nodes: ready.nodes,
      async cpuMicros() {
        const reply = next('cpu');
        child.send('cpu');
        return (await reply).micros;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
