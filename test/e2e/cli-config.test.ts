/**
 * The built `cascade` binary, as an operator runs it: help and usage errors, validate-config and
 * price on good, broken and secret-bearing configs. Run `npm run build` first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../helpers/config-files.js';
import { REPO_ROOT, assertBuilt, runCli, type CliResult } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';

const MOCK_CONFIG = 'config/balancer_config/mock_nodes.toml';
const MOCK_NODES = ['Helius-1', 'Helius-2', 'Alchemy-1', 'Alchemy-2', 'Triton-1', 'public-mirror'];

beforeAll(() => assertBuilt());

let temp: TempDir;
beforeEach(() => {
  temp = makeTempDir('cascade-cli-');
});
afterEach(() => temp.cleanup());

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

function json(result: CliResult): Record<string, unknown> {
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe('cascade: help, version and usage errors', () => {
  it('lists validate-config and price in --help and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('validate-config');
    expect(result.stdout).toContain('price');
    expect(result.stdout).toMatch(/^Usage: cascade/);
  });

  it.each<[string, string]>([
    ['validate-config', 'cascade validate-config --config config/balancer_config/mock_nodes.toml'],
    ['price', 'cascade price getBalance'],
  ])('shows an example in `%s --help`', async (command, example) => {
    const result = await runCli([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Example:');
    expect(result.stdout).toContain(example);
    expect(result.stdout).toContain('--config <path>');
    expect(result.stdout).toContain('--json');
  });

  it.each(['--version', '-V'])('prints the package.json version for %s', async (flag) => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await runCli([flag]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(pkg.version);
  });

  it('exits 2 on an unknown command with a usage hint on stderr', async () => {
    const result = await runCli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown command 'frobnicate'");
    expect(result.stderr).toContain('cascade --help');
  });

  it('suggests the command a typo was meant to be', async () => {
    const result = await runCli(['validate-confg']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('validate-config');
  });

  it('exits 2 on an unknown flag with a usage hint on stderr', async () => {
    const result = await runCli(['validate-config', '--frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown option '--frobnicate'");
    expect(result.stderr).toContain('--help');
  });

  it('exits 2 when price gets no method', async () => {
    const result = await runCli(['price', '--config', MOCK_CONFIG]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("missing required argument 'method'");
  });
});

describe('cascade validate-config', () => {
  it('prints the node table for the mock config and exits 0', async () => {
    const result = await runCli(['validate-config', '--config', MOCK_CONFIG]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const header of ['node', 'tier', 'url', 'rps', 'monthly limit', 'price list']) {
      expect(result.stdout).toContain(header);
    }
    for (const name of MOCK_NODES) expect(result.stdout).toContain(name);
    expect(result.stdout).toContain('http://127.0.0.1:8891/');
    expect(result.stdout).toContain('unmetered');
    expect(result.stdout).toContain(
      `${path.join(REPO_ROOT, MOCK_CONFIG)}: OK, ${MOCK_NODES.length} node(s)`,
    );
  });

  it('reads CONFIG_PATH when --config is absent', async () => {
    const result = await runCli(['validate-config'], { env: { CONFIG_PATH: MOCK_CONFIG } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`${path.join(REPO_ROOT, MOCK_CONFIG)}: OK`);
  });

  it('prefers --config over CONFIG_PATH', async () => {
    const result = await runCli(['validate-config', '--config', MOCK_CONFIG], {
      env: { CONFIG_PATH: 'does/not/exist.toml' },
    });
    expect(result.code).toBe(0);
  });

  it('falls back to config/balancer_config/config.toml and names it when missing', async () => {
    const result = await runCli(['validate-config'], { cwd: temp.dir });
    const tried = path.join(temp.dir, 'config/balancer_config/config.toml');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`error: ${tried}: config file not found`);
  });

  it('names the CONFIG_PATH file it tried', async () => {
    const result = await runCli(['validate-config'], {
      cwd: temp.dir,
      env: { CONFIG_PATH: 'custom/place.toml' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(path.join(temp.dir, 'custom/place.toml'));
  });

  function writeBroken(): string {
    temp.write({
      'broken.toml': balancerToml({
        server: { port: 70000 },
        nodes: [
          nodeFields('a', { provider_pricing_path: 'prices.toml' }),
          nodeFields('b', { provider_pricing_path: 'prices.toml', rps_limt: 5 }),
          nodeFields('c', { provider_pricing_path: 'prices.toml', rps_limit: 0 }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    return temp.path('broken.toml');
  }

  it('prints one line per problem on a broken config and exits 1', async () => {
    const file = writeBroken();
    const result = await runCli(['validate-config', '--config', 'broken.toml'], { cwd: temp.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const errors = lines(result.stderr).filter((line) => line.startsWith('error: '));
    expect(errors).toEqual([
      `error: ${file}: server.port: must be between 0 and 65535, got 70000 — a TCP port from 0 to 65535 (0 picks a free one)`,
      `error: ${file}: nodes[1].rps_limt: unknown key — did you mean 'rps_limit'?`,
      `error: ${file}: nodes[2].rps_limit: RPS for node 'c' cannot be 0 — set the provider rate limit in requests per second; omit the key for no limit`,
    ]);
    expect(lines(result.stderr).at(-1)).toBe(`${file}: 3 problem(s); nothing was started`);
  });

  it('prints problems as JSON with --json', async () => {
    const file = writeBroken();
    const result = await runCli(['validate-config', '--config', 'broken.toml', '--json'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(1);
    const output = json(result);
    expect(Object.keys(output)).toEqual(['ok', 'path', 'errors', 'warnings', 'nodes']);
    expect(output).toMatchObject({ ok: false, path: file, warnings: [], nodes: [] });
    expect(output.errors).toEqual([
      {
        file,
        path: 'server.port',
        message: 'must be between 0 and 65535, got 70000',
        hint: 'a TCP port from 0 to 65535 (0 picks a free one)',
      },
      {
        file,
        path: 'nodes[1].rps_limt',
        message: 'unknown key',
        hint: "did you mean 'rps_limit'?",
      },
      {
        file,
        path: 'nodes[2].rps_limit',
        message: "RPS for node 'c' cannot be 0",
        hint: 'set the provider rate limit in requests per second; omit the key for no limit',
      },
    ]);
  });

  it('gives every --json problem a hint key, null when there is none', async () => {
    temp.write({ 'bad.toml': '[server\n' });
    const result = await runCli(['validate-config', '--config', 'bad.toml', '--json'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(1);
    const errors = json(result).errors as Array<Record<string, unknown>>;
    expect(errors).toHaveLength(1);
    expect(Object.keys(errors[0]!).sort()).toEqual(['file', 'hint', 'message', 'path']);
    expect(errors[0]!.hint).toBeNull();
    expect(errors[0]!.message).toMatch(/^not valid TOML/);
  });

  it('prints the nodes as JSON with --json', async () => {
    const result = await runCli(['validate-config', '--config', MOCK_CONFIG, '--json']);
    expect(result.code).toBe(0);
    const output = json(result);
    expect(output).toMatchObject({ ok: true, path: path.join(REPO_ROOT, MOCK_CONFIG) });
    expect(output.errors).toEqual([]);
    expect(output.warnings).toEqual([]);
    const nodes = output.nodes as Array<Record<string, unknown>>;
    expect(nodes.map((node) => node.name)).toEqual(MOCK_NODES);
    expect(nodes[0]).toEqual({
      name: 'Helius-1',
      tier: 0,
      url: 'http://127.0.0.1:8891/',
      ws_url: 'ws://127.0.0.1:8891/',
      rps_limit: 30000,
      max_concurrent: 10000,
      monthly_limit: null,
      spillover_threshold: null,
      reset_day: 1,
      price_list: 'config/provider_config/helius.toml',
      methods_priced: expect.any(Number) as number,
      unknown_method_cost: null,
    });
    expect(nodes[2]).toMatchObject({ name: 'Alchemy-1', unknown_method_cost: 20 });
  });

  it('shows "no limit" as null in JSON and the threshold of a metered node', async () => {
    temp.write({
      'config.toml': balancerToml({
        nodes: [
          nodeFields('metered', {
            rps_limit: undefined,
            max_concurrent: undefined,
            monthly_limit: 1000,
            provider_pricing_path: 'prices.toml',
          }),
        ],
      }),
      'prices.toml': priceListToml({ limits: { spillover_percent: 90 } }),
    });
    const result = await runCli(['validate-config', '--config', 'config.toml', '--json'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(0);
    expect((json(result).nodes as unknown[])[0]).toMatchObject({
      rps_limit: null,
      max_concurrent: null,
      monthly_limit: 1000,
      spillover_threshold: 900,
      price_list: 'prices.toml',
    });
    const human = await runCli(['validate-config', '--config', 'config.toml'], { cwd: temp.dir });
    expect(human.stdout).toContain('no limit');
    expect(human.stdout).toContain('900');
  });

  it('prints warnings but still exits 0', async () => {
    temp.write({
      'config.toml': balancerToml({
        server: { host: '0.0.0.0', enable_metrics: true },
        nodes: [nodeFields('a', { provider_pricing_path: 'prices.toml' })],
      }),
      'prices.toml': priceListToml(),
    });
    const result = await runCli(['validate-config', '--config', 'config.toml'], { cwd: temp.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `warning: ${temp.path('config.toml')}: server.enable_metrics: /metrics is served on 0.0.0.0`,
    );
    expect(result.stdout).toContain('OK, 1 node(s)');
  });

  it('reads variables from .env in the working directory', async () => {
    temp.write({
      '.env': 'CASCADE_E2E_KEY=from-dotenv\n',
      'config.toml': balancerToml({
        nodes: [
          nodeFields('a', {
            url: 'https://rpc.example.com/?k=$CASCADE_E2E_KEY',
            provider_pricing_path: 'prices.toml',
          }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    const ok = await runCli(['validate-config', '--config', 'config.toml'], { cwd: temp.dir });
    expect(ok.code).toBe(0);
    const shell = await runCli(['validate-config', '--config', 'config.toml', '--json'], {
      cwd: temp.dir,
      env: { CASCADE_E2E_KEY: 'from-shell' },
    });
    expect(shell.code).toBe(0);
  });

  it('names the unset variable and the node', async () => {
    temp.write({
      'config.toml': balancerToml({
        nodes: [
          nodeFields('keyed', {
            url: 'https://rpc.example.com/?k=$CASCADE_E2E_UNSET',
            provider_pricing_path: 'prices.toml',
          }),
        ],
      }),
      'prices.toml': priceListToml(),
    });
    const result = await runCli(['validate-config', '--config', 'config.toml'], {
      cwd: temp.dir,
      env: { CASCADE_E2E_UNSET: undefined },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "nodes[0].url: env var CASCADE_E2E_UNSET is required but not set (node 'keyed')",
    );
  });
});

describe('cascade price', () => {
  it('prints each method on each node in tier order', async () => {
    const result = await runCli(['price', 'getBalance', 'foo', '--config', MOCK_CONFIG]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const rows = lines(result.stdout)
      .filter((line) => line.startsWith('│'))
      .map((line) =>
        line
          .split('│')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    expect(rows).toEqual([
      ['method', 'node', 'tier', 'credits', 'source'],
      ['getBalance', 'Helius-1', '0', '1', 'routing'],
      ['getBalance', 'Helius-2', '0', '1', 'routing'],
      ['getBalance', 'Alchemy-1', '1', '10', 'routing'],
      ['getBalance', 'Alchemy-2', '1', '10', 'routing'],
      ['getBalance', 'Triton-1', '2', '1', 'routing'],
      ['getBalance', 'public-mirror', '2', '1', 'routing'],
      ['foo', 'Helius-1', '0', 'not priced (node skipped)', '—'],
      ['foo', 'Helius-2', '0', 'not priced (node skipped)', '—'],
      ['foo', 'Alchemy-1', '1', '20', 'unknown_method_cost'],
      ['foo', 'Alchemy-2', '1', '20', 'unknown_method_cost'],
      ['foo', 'Triton-1', '2', '1', 'unknown_method_cost'],
      ['foo', 'public-mirror', '2', '1', 'unknown_method_cost'],
    ]);
    expect(result.stdout).toContain('getBalance: first choice Helius-1 (tier 0) at 1 credit(s)');
    expect(result.stdout).toContain('foo: first choice Alchemy-1 (tier 1) at 20 credit(s)');
  });

  it('prints prices as JSON with --json', async () => {
    const result = await runCli(['price', 'getBalance', 'foo', '--config', MOCK_CONFIG, '--json']);
    expect(result.code).toBe(0);
    const output = json(result);
    expect(output.path).toBe(path.join(REPO_ROOT, MOCK_CONFIG));
    const prices = output.prices as Array<Record<string, unknown>>;
    expect(prices).toHaveLength(12);
    expect(prices[0]).toEqual({
      method: 'getBalance',
      node: 'Helius-1',
      tier: 0,
      cost: 1,
      source: 'routing',
    });
    expect(prices[6]).toEqual({
      method: 'foo',
      node: 'Helius-1',
      tier: 0,
      cost: null,
      source: null,
    });
    expect(prices[8]).toEqual({
      method: 'foo',
      node: 'Alchemy-1',
      tier: 1,
      cost: 20,
      source: 'unknown_method_cost',
    });
  });

  it("shows each method's routing policy", async () => {
    temp.write({
      'config.toml': balancerToml({
        nodes: [nodeFields('only', { provider_pricing_path: 'prices.toml' })],
        extra: [
          '[routing.methods]',
          'getAccountInfo = { hedge_after_ms = 150 }',
          'sendTransaction = { strategy = "latency", broadcast = 3 }',
        ].join('\n'),
      }),
      'prices.toml': priceListToml({ routing: { getBalance: 1 } }),
    });
    const methods = ['getBalance', 'getLatestBlockhash', 'getAccountInfo', 'sendTransaction'];
    const args = ['price', ...methods, '--config', 'config.toml'];
    const result = await runCli(args, { cwd: temp.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('getBalance: strategy cost — cheapest tier first');
    expect(result.stdout).toContain(
      'getLatestBlockhash: strategy latency — the fastest measured node first, whatever its tier',
    );
    expect(result.stdout).toContain(
      'getAccountInfo: strategy cost — cheapest tier first, then the fastest within it; hedged: a second node after 150 ms without an answer',
    );
    expect(result.stdout).toMatch(
      /sendTransaction: strategy latency — .*a write, signed: .*; broadcast to 3 nodes at once/,
    );
    const json = await runCli([...args, '--json'], { cwd: temp.dir });
    expect(JSON.parse(json.stdout).strategies).toContainEqual({
      method: 'sendTransaction',
      strategy: 'latency',
      hedge_after_ms: null,
      write: true,
      signed: true,
      broadcast: 3,
    });
  });

  it('treats method names case-sensitively', async () => {
    const result = await runCli(['price', 'getbalance', '--config', MOCK_CONFIG, '--json']);
    const prices = json(result).prices as Array<Record<string, unknown>>;
    expect(prices[0]).toMatchObject({ node: 'Helius-1', cost: null });
    expect(prices[2]).toMatchObject({ node: 'Alchemy-1', cost: 20, source: 'unknown_method_cost' });
  });

  it('says when no node prices a method', async () => {
    temp.write({
      'config.toml': balancerToml({
        nodes: [nodeFields('only', { provider_pricing_path: 'prices.toml' })],
      }),
      'prices.toml': priceListToml({ routing: { getBalance: 0 } }),
    });
    const result = await runCli(['price', 'getBalance', 'getSlot', '--config', 'config.toml'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('getBalance: first choice only (tier 0) at 0 credit(s)');
    expect(result.stdout).toContain('getSlot: no node prices it; requests for it get 502');
  });

  it('refuses a broken config with one line per problem and exits 1', async () => {
    temp.write({ 'config.toml': balancerToml({ nodes: [nodeFields('a', { tier: -1 })] }) });
    const result = await runCli(['price', 'getBalance', '--config', 'config.toml'], {
      cwd: temp.dir,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('nodes[0].tier: must be between 0 and 255, got -1');
    expect(result.stderr).toContain('cascade validate-config shows every problem');
  });
});

describe('secrets stay out of CLI output', () => {
  const SECRET = 'sk_live_SECRET123';
  const LITERAL = 'sk_live_LITERAL999';

  function writeKeyedConfig(extraNodes: ReturnType<typeof nodeFields>[] = []): void {
    const priced = { provider_pricing_path: 'prices.toml' };
    temp.write({
      'config.toml': balancerToml({
        nodes: [
          nodeFields('keyed', {
            ...priced,
            url: 'https://rpc.example.com/v2/$CASCADE_SECRET/rpc?api-key=${CASCADE_SECRET}&x=1',
          }),
          nodeFields('over-http', {
            ...priced,
            tier: 1,
            url: 'http://rpc.example.net/$CASCADE_SECRET?token=$CASCADE_SECRET',
          }),
          nodeFields('literal', {
            ...priced,
            tier: 2,
            url: `https://user:${LITERAL}@rpc.example.org/?api-key=${LITERAL}`,
          }),
          ...extraNodes,
        ],
      }),
      'prices.toml': priceListToml({ limits: { unknown_method_cost: 1 } }),
    });
  }

  const COMMANDS: ReadonlyArray<readonly string[]> = [
    ['validate-config', '--config', 'config.toml'],
    ['validate-config', '--config', 'config.toml', '--json'],
    ['price', 'getBalance', 'getSlot', '--config', 'config.toml'],
    ['price', 'getBalance', 'getSlot', '--config', 'config.toml', '--json'],
  ];

  function expectNoSecret(result: CliResult): void {
    for (const secret of [SECRET, LITERAL]) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stderr).not.toContain(secret);
    }
  }

  it.each(COMMANDS.map((args) => [args.join(' '), args] as const))(
    'never prints the key with `%s`',
    async (_name, args) => {
      writeKeyedConfig();
      const result = await runCli(args, { cwd: temp.dir, env: { CASCADE_SECRET: SECRET } });
      expect(result.code).toBe(0);
      expectNoSecret(result);
      expect(result.stdout).toContain('keyed');
      if (args[0] === 'validate-config') {
        expect(result.stdout).toContain('https://rpc.example.com/v2/***/rpc?api-key=***&x=***');
        expect(result.stdout).toContain('https://***@rpc.example.org/?api-key=***');
        expect(result.stdout).toContain(
          "node 'over-http' sends what looks like an API key over plain http",
        );
      }
    },
  );

  it.each(COMMANDS.map((args) => [args.join(' '), args] as const))(
    'never prints the key with `%s` on a broken config',
    async (_name, args) => {
      writeKeyedConfig([
        nodeFields('whole-url-is-key', { url: '$CASCADE_SECRET', tier: 3 }),
        nodeFields('bad-scheme', { url: 'ftp://$CASCADE_SECRET@host/', tier: 3 }),
        nodeFields('unterminated', { url: `https://h/\${CASCADE_SECRET?k=${LITERAL}`, tier: 3 }),
        nodeFields('zero', { url: 'https://h/?k=$CASCADE_SECRET', rps_limit: 0 }),
      ]);
      const result = await runCli(args, { cwd: temp.dir, env: { CASCADE_SECRET: SECRET } });
      expect(result.code).toBe(1);
      expectNoSecret(result);
      const output = result.stdout + result.stderr;
      expect(output).toContain("invalid URL for node 'whole-url-is-key'");
      expect(output).toContain("RPS for node 'zero' cannot be 0");
    },
  );

  it('never prints a key that came from .env', async () => {
    writeKeyedConfig();
    temp.write({ '.env': `CASCADE_SECRET=${SECRET}\n` });
    for (const args of COMMANDS) {
      const result = await runCli(args, { cwd: temp.dir, env: { CASCADE_SECRET: undefined } });
      expect(result.code).toBe(0);
      expectNoSecret(result);
    }
  });
});
