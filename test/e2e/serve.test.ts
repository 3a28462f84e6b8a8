import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Connection } from '@solana/web3.js';
import { createPublicClient, http } from 'viem';
import { mainnet } from 'viem/chains';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { CLI_PATH, REPO_ROOT, runCli, startCli, type CliProcess } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const SOLANA_PRICES = path.join(REPO_ROOT, 'config/provider_config/solana.toml');
const fixture = useE2eFixture();
const { processes, mocks } = fixture;
const tempDir = (): string => fixture.tempDir().dir;

function configFor(nodes: MockNode[], extra = ''): string {
  const blocks = nodes.map(
    (node, i) => `[[nodes]]
name = "${node.name}"
url = "${node.url}/?api-key=$E2E_SECRET"
tier = ${i}
rps_limit = 1000
max_concurrent = 50
monthly_limit = 1_000_000
provider_pricing_path = "${SOLANA_PRICES}"
`,
  );
  // Deadlines far past any answer: the mocks share this test process, which a busy machine
  // can pause for longer than the default 500 ms attempt deadline (no test here is about them).
  return `[server]\nhost = "127.0.0.1"\nport = 0\nenable_metrics = true\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000\n${extra}\n${blocks.join('\n')}`;
}

async function serving(p: CliProcess): Promise<string> {
  const line = await p.waitFor(/cascade (demo )?serving/);
  return (JSON.parse(line) as { url: string }).url;
}

describe('cascade serve (spawned)', () => {
  it('serves real client libraries, keeps secrets out of its output, and flushes usage on SIGTERM', async () => {
    mocks.push(...(await startMockNodes([{ name: 'primary' }, { name: 'backup' }])));
    const dir = tempDir();
    const config = path.join(dir, 'config.toml');
    writeFileSync(config, configFor(mocks));
    const p = startCli(['serve', '--config', config], {
      cwd: dir,
      env: { E2E_SECRET: 'sk_live_TOPSECRET42' },
    });
    processes.push(p);
    const url = await serving(p);

    const solana = new Connection(url, 'confirmed');
    expect(await solana.getSlot()).toBeGreaterThan(0);
    const blockhash = await solana.getLatestBlockhash();
    expect(blockhash.blockhash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const viem = createPublicClient({ chain: mainnet, transport: http(url) });
    expect(await viem.getBlockNumber()).toBeGreaterThan(0n);

    const health = await (await fetch(`${url}/health`)).text();
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(await p.stop('SIGTERM')).toBe(0);
    for (const text of [p.output(), health, metrics]) expect(text).not.toContain('TOPSECRET');
    expect(p.output()).toContain('api-key=***');
    const stopped = p
      .output()
      .split('\n')
      .find((line) => line.includes('cascade stopped'))!;
    expect(JSON.parse(stopped)).toMatchObject({
      requests: { forwarded: 3, bad_request: 0, bad_gateway: 0, timeout: 0 },
      usage: { primary: 3 },
    });

    const quotas = JSON.parse(readFileSync(path.join(dir, 'quotas.json'), 'utf8')) as Record<
      string,
      { used: number }
    >;
    expect(quotas.primary!.used).toBe(3);
    expect(mocks[0]!.stats().requests).toBe(3);
  });

  it('--demo starts its own mock nodes and answers a Solana client at / and an EVM one at /eth', async () => {
    const dir = tempDir();
    const p = startCli(['serve', '--demo', '--port', '0'], { cwd: dir });
    processes.push(p);
    const url = await serving(p);
    const solana = new Connection(url);
    expect(await solana.getVersion()).toHaveProperty('solana-core');
    expect(
      await solana.getBalance((await import('@solana/web3.js')).PublicKey.default),
    ).toBeGreaterThanOrEqual(0);
    const health = (await (await fetch(`${url}/health`)).json()) as {
      total_nodes: number;
      chains: { name: string; paths: string[] }[];
    };
    expect(health.total_nodes).toBe(8);
    expect(health.chains.map((chain) => [chain.name, chain.paths])).toEqual([
      ['solana', ['/', '/solana']],
      ['eth', ['/eth']],
    ]);
    // The EVM chain answers on its own path, from its own mock nodes.
    const block = await fetch(`${url}/eth`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    });
    expect(await block.json()).toMatchObject({ id: 1, result: expect.stringMatching(/^0x/) });
    expect(await p.stop('SIGINT')).toBe(0);
  });

  it('refuses to start on a bad config with one line per problem and exit 1', async () => {
    const dir = tempDir();
    const config = path.join(dir, 'bad.toml');
    writeFileSync(
      config,
      '[server]\nhost = "127.0.0.1"\nport = 0\n[[nodes]]\nname = "x"\nurl = "nope"\ntier = 0\nrps_limit = 0\nmonthly_limit = 0\nprovider_pricing_path = "missing.toml"\n',
    );
    const result = await runCli(['serve', '--config', config], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('nodes[0].url');
    expect(result.stderr).toContain("RPS for node 'x' cannot be 0");
    expect(existsSync(path.join(dir, 'quotas.json'))).toBe(false);
  });

  it('serves without loading what only the demo, a terminal or other undici parts need', async () => {
    // Every module the process loads, listed at exit: ES modules through a resolve hook, the
    // CommonJS ones (undici, pino-pretty) from require's cache.
    mocks.push(...(await startMockNodes([{ name: 'lean' }])));
    const dir = tempDir();
    const loaded = path.join(dir, 'loaded.txt');
    const hook = path.join(dir, 'list-modules.mjs');
    const resolveHook = [
      "import { appendFileSync } from 'node:fs';",
      'export async function resolve(specifier, context, next) {',
      '  const found = await next(specifier, context);',
      "  appendFileSync(process.env.LOADED_LIST, found.url + '\\n');",
      '  return found;',
      '}',
    ].join('\n');
    writeFileSync(
      hook,
      [
        "import { appendFileSync } from 'node:fs';",
        "import { createRequire, register } from 'node:module';",
        `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(resolveHook)}));`,
        'const cache = createRequire(import.meta.url).cache;',
        "process.on('exit', () => appendFileSync(process.env.LOADED_LIST, Object.keys(cache).join('\\n')));",
      ].join('\n'),
    );
    const config = path.join(dir, 'config.toml');
    writeFileSync(config, configFor(mocks));
    const p = startCli(['serve', '--config', config], {
      cwd: dir,
      env: { E2E_SECRET: 'x', LOADED_LIST: loaded },
      launcher: [process.execPath, '--import', pathToFileURL(hook).href, CLI_PATH],
    });
    processes.push(p);
    const url = await serving(p);
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
    });
    expect(answer.status).toBe(200);
    expect(await p.stop('SIGTERM')).toBe(0);
    const modules = readFileSync(loaded, 'utf8');
    // The list is real: the server's own modules and undici's client are in it.
    expect(modules).toContain('/dist/core/http/server.js');
    expect(modules).toMatch(/undici[\\/]lib[\\/]dispatcher[\\/]client\.js/);
    expect(modules).not.toContain('/dist/mock/');
    expect(modules).not.toMatch(/undici[\\/]index\.js/);
    expect(modules).not.toContain('pino-pretty');
  });

  it('refuses to start when the port is taken, naming it', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const dir = tempDir();
      const result = await runCli(['serve', '--demo', '--port', String(port)], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`127.0.0.1:${port} is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('rejects a bad --port with exit 2', async () => {
    const result = await runCli(['serve', '--port', 'abc']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("'abc' is not a port");
  });
});
