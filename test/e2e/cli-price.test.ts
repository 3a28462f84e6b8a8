/**
 * The built `cascade` binary, as an operator runs it: price, and secrets kept out of the
 * output of every config command. Run `npm run build` first.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../support/config-files.js';
import { REPO_ROOT, assertBuilt, runCli, type CliResult } from '../support/cli-process.js';
import { json, lines } from '../support/cli-output.js';
import { useTempDir } from '../support/temp-dir.js';

const MOCK_CONFIG = 'config/balancer_config/mock_nodes.toml';

beforeAll(() => assertBuilt());

const temp = useTempDir('cascade-cli-');

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

describe('cascade price eth_getLogs --blocks', () => {
  it('shows how the range is cut for each node and what it costs', async () => {
    const config = 'config/balancer_config/evm.example.toml';
    const env = { ALCHEMY_API_KEY: 'test-key' };
    const result = await runCli(['price', 'eth_getLogs', '--blocks', '50000', '--config', config], {
      env,
    });
    expect(result.code).toBe(0);
    const rows = lines(result.stdout).filter((line) => /^│ (alchemy|public)-eth /.test(line));
    expect(rows[0]).toMatch(
      /│ alchemy-eth\s+│ 0\s+│ 10,000\s+│ 5\s+│ 75\s+│ 375\s+│ 285,000,000\s+│/,
    );
    expect(rows[1]).toMatch(/│ public-eth\s+│ 1\s+│ no limit\s+│ 1\s+│ 1\s+│ 1\s+│ unmetered\s+│/);
    expect(result.stdout).toContain(
      'eth_getLogs over 50,000 blocks: first choice alchemy-eth (tier 0), 5 queries of at most 10,000 blocks, 375 credits',
    );
    const asJson = json(
      await runCli(['price', 'eth_getLogs', '--blocks', '50000', '--config', config, '--json'], {
        env,
      }),
    );
    expect((asJson.logs as Array<{ nodes: unknown[] }>)[0]?.nodes[0]).toEqual({
      node: 'alchemy-eth',
      tier: 0,
      blocks_per_query: 10_000,
      queries: 5,
      credits_per_query: 75,
      credits: 375,
      spillover_threshold: 285_000_000,
    });
  });

  it("plans each EVM chain of a multi-chain config, an account node at its account's threshold", async () => {
    const config = 'config/balancer_config/multichain.example.toml';
    const env = { ALCHEMY_API_KEY: 'test-key', HELIUS_API_KEY: 'test-key' };
    const result = await runCli(['price', 'eth_getLogs', '--blocks', '50000', '--config', config], {
      env,
    });
    expect(result.code).toBe(0);
    const plans = result.stdout.slice(result.stdout.indexOf('│ node '));
    expect(plans).toMatch(
      /│ alchemy-eth\s+│ 0\s+│ 10,000\s+│ 5\s+│ 75\s+│ 375\s+│ 285,000,000 \(account alchemy\)/,
    );
    expect(plans).toContain('eth_getLogs on eth over 50,000 blocks: first choice alchemy-eth');
    expect(plans).toContain('eth_getLogs on base over 50,000 blocks: first choice alchemy-base');
    // Solana's lists price eth_getLogs only through unknown_method_cost: no plan for it.
    expect(plans).not.toContain('on solana over');
    const only = await runCli(
      [
        'price',
        'eth_getLogs',
        '--blocks',
        '50000',
        '--chain',
        'base',
        '--config',
        config,
        '--json',
      ],
      { env },
    );
    const logs = json(only).logs as Array<{ chain: string; nodes: Array<{ node: string }> }>;
    expect(logs.map((report) => report.chain)).toEqual(['base']);
    expect(logs[0]!.nodes.map((row) => row.node)).toEqual(['alchemy-base', 'public-base']);
  });

  it('says when the operator limit refuses the range, and refuses a bad --blocks', async () => {
    temp.write({
      'config.toml': balancerToml({
        server: { max_logs_block_range: 5000 },
        nodes: [
          nodeFields('only', { provider_pricing_path: 'prices.toml', max_logs_block_range: 1000 }),
        ],
      }),
      'prices.toml': priceListToml({ routing: { eth_getLogs: 20 } }),
    });
    const result = await runCli(
      ['price', 'eth_getLogs', '--blocks', '30000', '--config', 'config.toml'],
      {
        cwd: temp.dir,
      },
    );
    expect(result.stdout).toContain(
      'eth_getLogs over 30,000 blocks: refused before any node is asked — over max_logs_block_range (5,000 blocks)',
    );
    const bad = await runCli(['price', 'eth_getLogs', '--blocks', 'many'], { cwd: temp.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("'many' is not a number of blocks");
    const other = await runCli(
      ['price', 'getBalance', '--blocks', '10', '--config', 'config.toml'],
      {
        cwd: temp.dir,
      },
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--blocks plans an eth_getLogs range');
  });
});
