/** `cascade mock-nodes` as a user runs it: the built CLI, a temp config, signals. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMockNodes } from '../../src/commands/mock-nodes.js';
import type { CommandIo } from '../../src/commands/io.js';
import { CLI_PATH, REPO_ROOT, assertBuilt, runCli } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { freePort } from '../support/free-port.js';

const PRICES = path.join(REPO_ROOT, 'config/provider_config/solana.toml');

let temp: TempDir;
let child: ChildProcessWithoutNullStreams | undefined;
beforeAll(() => assertBuilt());
beforeEach(() => {
  temp = makeTempDir('cascade-mock-nodes-');
});
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  temp.cleanup();
});

/** Ports free now that no listen(0) will be given (see test/support/free-port.ts). */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  return ports;
}

function nodeToml(name: string, url: string, tier: number): string {
  return [
    '[[nodes]]',
    `name = "${name}"`,
    `url = "${url}"`,
    `tier = ${tier}`,
    'rps_limit = 100',
    'max_concurrent = 10',
    'monthly_limit = 0',
    `provider_pricing_path = ${JSON.stringify(PRICES)}`,
    '',
  ].join('\n');
}

/** A config with two local nodes on `ports` and one remote node (skipped). */
function writeConfig(ports: readonly number[]): string {
  temp.write({
    'mock.toml': [
      '[server]\nhost = "127.0.0.1"\nport = 3000\n',
      nodeToml('local-a', `http://127.0.0.1:${ports[0]}`, 0),
      nodeToml('local-b', `http://localhost:${ports[1]}/v1/key`, 1),
      nodeToml('remote', 'https://rpc.example.com', 2),
    ].join('\n'),
  });
  return temp.path('mock.toml');
}

async function rpc(url: string, method = 'getHealth') {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers,
    json: text ? (JSON.parse(text) as unknown) : undefined,
  };
}

function capture(): CommandIo & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out: (text) => lines.push(text),
    err: (text) => lines.push(text),
    env: {},
    cwd: REPO_ROOT,
  };
}

describe('cascade mock-nodes (built CLI)', () => {
  it('serves the local nodes of a config until SIGTERM, then exits 0', async () => {
    const ports = await freePorts(2);
    const config = writeConfig(ports);
    child = spawn(process.execPath, [CLI_PATH, 'mock-nodes', '--config', config, '--quiet'], {
      cwd: REPO_ROOT,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child!.on('exit', resolve));
    const deadline = Date.now() + 30_000;
    while (!stdout.includes('mock node(s) running')) {
      if (Date.now() > deadline) throw new Error(`no table in time\n${stdout}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stdout).toContain('local-a');
    expect(stdout).toContain(`http://127.0.0.1:${ports[1]}`);
    expect(stderr).toContain('skipping remote');

    for (const port of ports) {
      const answer = await rpc(`http://127.0.0.1:${port}/`);
      expect(answer).toMatchObject({ status: 200, json: { jsonrpc: '2.0', result: 'ok', id: 1 } });
    }
    expect((await rpc(`http://127.0.0.1:${ports[0]}`, 'eth_chainId')).json).toMatchObject({
      result: '0x1',
    });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain('mock nodes stopped');
  });

  it('exits 2 naming the flag and value for a bad flag', async () => {
    const result = await runCli(['mock-nodes', '--fault', 'explode']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--fault "explode"');
    const rate = await runCli(['mock-nodes', '--fault', 'close', '--failure-rate', '1.5']);
    expect(rate.code).toBe(2);
    expect(rate.stderr).toContain('--failure-rate "1.5"');
  });

  it('exits 2 listing the presets for an unknown --method-error preset; lists them on request', async () => {
    const bad = await runCli(['mock-nodes', '--method-error', 'eth_call=geth.revrt']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--method-error "eth_call=geth.revrt": unknown node error preset');
    expect(bad.stderr).toContain('geth.revert');
    const list = await runCli(['mock-nodes', '--list-method-errors']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/solana\.custom_program_error .*code \(default 1\)/);
  });

  it('exits 1 with one line naming the port when it is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    const [free] = await freePorts(1);
    try {
      const result = await runCli(['mock-nodes', '--config', writeConfig([free!, taken])]);
      expect(result.code).toBe(1);
      const errors = result.stderr.split('\n').filter((line) => line.startsWith('error:'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(`port ${taken} is already in use`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});

describe('runMockNodes', () => {
  it('applies --fault only to --nodes, with delays in config order', async () => {
    const ports = await freePorts(2);
    const io = capture();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runMockNodes(
      {
        config: writeConfig(ports),
        delays: '0,5',
        fault: 'http',
        faultStatus: '429',
        retryAfter: '7',
        nodes: 'local-a',
        quiet: true,
      },
      io,
      stopped,
    );
    const deadline = Date.now() + 30_000;
    while (!io.lines.some((line) => line.includes('running'))) {
      if (Date.now() > deadline) throw new Error(io.lines.join('\n'));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const table = io.lines.join('\n');
    expect(table).toMatch(/local-a .*0 ms .*http 429 \(retry-after 7\)/);
    expect(table).toMatch(/local-b .*5 ms .*none/);
    try {
      const limited = await rpc(`http://127.0.0.1:${ports[0]}`);
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('7');
      expect((await rpc(`http://127.0.0.1:${ports[1]}`)).status).toBe(200);
    } finally {
      stop();
    }
    expect(await running).toBe(0);
  });

  it('answers --method-error on the --nodes it names', async () => {
    const ports = await freePorts(2);
    const io = capture();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const running = runMockNodes(
      {
        config: writeConfig(ports),
        methodError: ['eth_call=geth.revert:paused'],
        nodes: 'local-a',
        quiet: true,
      },
      io,
      stopped,
    );
    const deadline = Date.now() + 10_000;
    while (!io.lines.some((line) => line.includes('running'))) {
      if (Date.now() > deadline) throw new Error(io.lines.join('\n'));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(io.lines.join('\n')).toMatch(/local-a .*eth_call=geth\.revert:paused/);
    try {
      expect((await rpc(`http://127.0.0.1:${ports[0]}`, 'eth_call')).json).toMatchObject({
        error: { code: 3, message: 'execution reverted: paused' },
      });
      expect((await rpc(`http://127.0.0.1:${ports[1]}`, 'eth_call')).json).toHaveProperty('result');
    } finally {
      stop();
    }
    expect(await running).toBe(0);
  });
});

describe('runMockNodes --host', () => {
  it('binds every node at --host instead of its config address, on the config port', async () => {
    const ports = await freePorts(2);
    const io = capture();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    // 127.0.0.2 is loopback too: a node listening there is not listening on 127.0.0.1.
    const running = runMockNodes(
      { config: writeConfig(ports), host: '127.0.0.2', quiet: true },
      io,
      stopped,
    );
    const deadline = Date.now() + 10_000;
    while (!io.lines.some((line) => line.includes('running'))) {
      if (Date.now() > deadline) throw new Error(io.lines.join('\n'));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    try {
      expect(io.lines.join('\n')).toContain(`http://127.0.0.2:${ports[1]}`);
      for (const port of ports) {
        expect((await rpc(`http://127.0.0.2:${port}`)).status).toBe(200);
        await expect(rpc(`http://127.0.0.1:${port}`)).rejects.toThrow(/ECONNREFUSED/);
      }
    } finally {
      stop();
    }
    expect(await running).toBe(0);
  });
});
