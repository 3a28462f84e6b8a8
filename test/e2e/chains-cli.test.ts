/**
 * The operator's commands on a config with two chains and provider accounts (issue 28), run
 * as built: validate-config shows the chains and the accounts, price has chain and account
 * columns and `--chain`, status groups by chain, quota shows and resets the accounts' pools —
 * from quotas.json, through a running server, and in Redis for the replicas.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { periodStart, utcDay } from '../../src/core/quota/billing-period.js';
import { startMockNodes } from '../../src/mock/index.js';
import { json, lines } from '../support/cli-output.js';
import { runCli, startCli, type CliResult } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';
import { redisUnavailable, startRedis } from '../support/redis-server.js';

const fixture = useE2eFixture();
const noRedis = redisUnavailable();

const PRICES =
  '[limits]\nspillover_percent = 100\nunknown_method_cost = 1\n[routing]\neth_getLogs = 75\ngetSlot = 1\n';

/** The nodes: name, chain, account (or none), tier. The EVM mocks say chain id 1. */
const NODES = [
  ['sol-prem', 'sol', 'shared', 0],
  ['sol-backup', 'sol', undefined, 1],
  ['evm-prem', 'evm', 'shared', 0],
  ['evm-backup', 'evm', 'free', 1],
] as const;

/** A directory with the two-chain config (mock nodes behind it) and the price list. */
async function setup(
  extra = '',
): Promise<{ dir: string; run: (...args: string[]) => Promise<CliResult> }> {
  const temp = fixture.tempDir();
  const mocks = await startMockNodes(NODES.map(([name]) => ({ name })));
  fixture.mocks.push(...mocks);
  const url = (name: string) => mocks.find((mock) => mock.name === name)!.url;
  const chain = (name: string, toml: string) =>
    [
      `[[chains]]\nname = "${name}"\n${toml}`,
      ...NODES.filter((node) => node[1] === name).map(
        ([node, , account, tier]) =>
          `[[chains.nodes]]\nname = "${node}"\nurl = "${url(node)}"\ntier = ${tier}\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n${account ? `account = "${account}"\n` : ''}`,
      ),
    ].join('\n');
  temp.write({
    'prices.toml': PRICES,
    'config.toml': [
      '[server]\nhost = "127.0.0.1"\nport = 0\nadmin_port = 0\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000',
      '[cache]\nenabled = false\ncoalesce = false',
      extra,
      '[[accounts]]\nname = "shared"\nmonthly_limit = 1000\nspillover_percent = 90\nreset_day = 15\nrps_limit = 50',
      '[[accounts]]\nname = "free"\nmonthly_limit = 0',
      chain('sol', ''),
      chain('evm', 'paths = ["/evm", "/base"]\nhosts = ["base.example.com"]\nexpect_chain = "1"'),
    ].join('\n\n'),
  });
  return {
    dir: temp.dir,
    run: (...args) => runCli([...args, '--config', 'config.toml'], { cwd: temp.dir }),
  };
}

/** The cells of each table row of `text` (header rows included). */
function cells(text: string): string[][] {
  return lines(text)
    .filter((line) => line.startsWith('│'))
    .map((line) =>
      line
        .split('│')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe('cascade validate-config and price with chains and accounts', () => {
  it('validate-config shows each chain, each account and which nodes are theirs', async () => {
    const { run } = await setup();
    const table = await run('validate-config');
    expect(table.code, table.stderr).toBe(0);
    const rows = cells(table.stdout);
    expect(rows[0]!.slice(0, 4)).toEqual(['node', 'chain', 'account', 'tier']);
    expect(rows.slice(1, 5).map((row) => row.slice(0, 4))).toEqual([
      ['sol-prem', 'sol', 'shared', '0'],
      ['sol-backup', 'sol', '—', '1'],
      ['evm-prem', 'evm', 'shared', '0'],
      ['evm-backup', 'evm', 'free', '1'],
    ]);
    // Billed to an account: its pool's limit (the accounts table), never "unmetered".
    expect(rows[1]!.slice(7, 9)).toEqual(['account shared', 'account shared']);
    expect(rows).toContainEqual(['chain', 'paths', 'hosts', 'expect chain', 'nodes']);
    expect(rows).toContainEqual(['sol', '/sol', '—', '—', 'sol-prem, sol-backup']);
    expect(rows).toContainEqual([
      'evm',
      '/evm, /base',
      'base.example.com',
      '1',
      'evm-prem, evm-backup',
    ]);
    expect(rows).toContainEqual([
      'account',
      'monthly limit',
      'spillover at',
      'reset day',
      'rps',
      'max concurrent',
      'nodes',
    ]);
    expect(rows).toContainEqual([
      'shared',
      '1,000',
      '900',
      '15',
      '50',
      'no limit',
      'sol-prem, evm-prem',
    ]);
    expect(rows).toContainEqual([
      'free',
      'unmetered',
      'unmetered',
      '1',
      'no limit',
      'no limit',
      'evm-backup',
    ]);
    expect(table.stdout).toMatch(/config\.toml: OK, 2 chain\(s\), 4 node\(s\), 2 account\(s\)\n$/);

    const doc = json(await run('validate-config', '--json'));
    expect(doc.chains).toEqual([
      {
        name: 'sol',
        paths: ['/sol'],
        hosts: [],
        expect_chain: null,
        nodes: ['sol-prem', 'sol-backup'],
      },
      {
        name: 'evm',
        paths: ['/evm', '/base'],
        hosts: ['base.example.com'],
        expect_chain: '1',
        nodes: ['evm-prem', 'evm-backup'],
      },
    ]);
    expect(doc.accounts).toEqual([
      {
        name: 'shared',
        monthly_limit: 1000,
        spillover_threshold: 900,
        reset_day: 15,
        rps_limit: 50,
        max_concurrent: null,
        nodes: ['sol-prem', 'evm-prem'],
      },
      {
        name: 'free',
        monthly_limit: null,
        spillover_threshold: null,
        reset_day: 1,
        rps_limit: null,
        max_concurrent: null,
        nodes: ['evm-backup'],
      },
    ]);
    const nodes = doc.nodes as Record<string, unknown>[];
    expect(nodes.map((node) => [node.name, node.chain, node.account])).toEqual([
      ['sol-prem', 'sol', 'shared'],
      ['sol-backup', 'sol', undefined],
      ['evm-prem', 'evm', 'shared'],
      ['evm-backup', 'evm', 'free'],
    ]);
  });

  it('price shows chain and account columns, and --chain keeps to one chain', async () => {
    const { run } = await setup();
    const all = await run('price', 'eth_getLogs');
    expect(all.code, all.stderr).toBe(0);
    expect(cells(all.stdout)).toEqual([
      ['method', 'chain', 'node', 'account', 'tier', 'credits', 'source'],
      ['eth_getLogs', 'sol', 'sol-prem', 'shared', '0', '75', 'routing'],
      ['eth_getLogs', 'sol', 'sol-backup', '—', '1', '75', 'routing'],
      ['eth_getLogs', 'evm', 'evm-prem', 'shared', '0', '75', 'routing'],
      ['eth_getLogs', 'evm', 'evm-backup', 'free', '1', '75', 'routing'],
    ]);
    expect(all.stdout).toContain(
      'eth_getLogs on sol: first choice sol-prem (tier 0) at 75 credit(s)',
    );
    expect(all.stdout).toContain(
      'eth_getLogs on evm: first choice evm-prem (tier 0) at 75 credit(s)',
    );

    const evm = await run('price', '--chain', 'evm', 'eth_getLogs');
    expect(evm.code, evm.stderr).toBe(0);
    expect(cells(evm.stdout).slice(1)).toEqual([
      ['eth_getLogs', 'evm', 'evm-prem', 'shared', '0', '75', 'routing'],
      ['eth_getLogs', 'evm', 'evm-backup', 'free', '1', '75', 'routing'],
    ]);
    expect(evm.stdout).not.toContain('on sol');
    expect(evm.stdout).toContain('eth_getLogs on evm: strategy cost');
    const prices = json(await run('price', '--chain', 'sol', 'getSlot', '--json'));
    expect(prices.prices).toEqual([
      {
        method: 'getSlot',
        chain: 'sol',
        node: 'sol-prem',
        account: 'shared',
        tier: 0,
        cost: 1,
        source: 'routing',
      },
      { method: 'getSlot', chain: 'sol', node: 'sol-backup', tier: 1, cost: 1, source: 'routing' },
    ]);
    expect(prices.strategies).toMatchObject([{ chain: 'sol', method: 'getSlot' }]);

    // A [[nodes]] config is the one chain 'default': --chain names it or fails saying so.
    const mockConfig = ['--config', 'config/balancer_config/mock_nodes.toml'];
    const plain = await runCli(['price', '--chain', 'default', 'getBalance', ...mockConfig]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(cells(plain.stdout)[0]).toEqual(['method', 'node', 'tier', 'credits', 'source']);
    expect(plain.stdout).toContain('getBalance: first choice Helius-1 (tier 0) at 1 credit(s)');
    const base = await runCli(['price', '--chain', 'base', 'getBalance', ...mockConfig]);
    expect(base.code).toBe(2);
    expect(base.stderr).toBe(
      "error: unknown chain 'base'\nhint: this config's nodes are top-level [[nodes]]: its one chain is 'default'\n",
    );

    const unknown = await run('price', '--chain', 'polygon', 'eth_getLogs');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe(
      "error: unknown chain 'polygon'\nhint: the config's chains are: sol, evm\n",
    );
  });
});

/** The JSON of `quota show`. */
interface QuotaJson {
  source: string;
  nodes: Array<{ name: string; used: number; account?: string }>;
  accounts?: Array<{ name: string; used: number; nodes: string[]; monthly_limit: number | null }>;
}

async function quotaShow(run: (...args: string[]) => Promise<CliResult>): Promise<QuotaJson> {
  const result = await run('quota', 'show', '--json');
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as QuotaJson;
}

const rpc = (method: string, id: number) => JSON.stringify({ jsonrpc: '2.0', id, method });

async function post(url: string, body: string): Promise<number> {
  const response = await fetch(url, { method: 'POST', body });
  await response.text();
  return response.status;
}

describe('cascade status and quota with chains and accounts', () => {
  it('shows and resets an account pool in quotas.json, and refuses an unknown account', async () => {
    const { dir, run } = await setup();
    const today = utcDay(new Date());
    writeFileSync(
      `${dir}/quotas.json`,
      JSON.stringify({
        'sol-prem': { used: 300, period_start: periodStart(today, 1) },
        'evm-prem': { used: 200, period_start: periodStart(today, 1) },
        'account:shared': { used: 500, period_start: periodStart(today, 15) },
      }),
    );
    const table = await run('quota', 'show');
    expect(table.code, table.stderr).toBe(0);
    const shared = cells(table.stdout).find((row) => row[0] === 'shared')!;
    expect(shared.slice(0, 5)).toEqual(['shared', 'sol-prem, evm-prem', '500', '900', '1,000']);
    expect(shared[5]).toContain('50.0%');
    expect(shared[6]).toBe(periodStart(today, 15));
    // A node billed to an account names the account where its own limit would be.
    const billed = cells(table.stdout).find((row) => row[0] === 'sol-prem')!;
    expect(billed.slice(2, 6)).toEqual([
      '300',
      'account shared',
      'account shared',
      'see account shared',
    ]);
    const own = cells(table.stdout).find((row) => row[0] === 'sol-backup')!;
    expect(own[3]).toBe('unmetered');
    const json = await quotaShow(run);
    expect(json.nodes.map((node) => [node.name, node.account])).toEqual([
      ['sol-prem', 'shared'],
      ['sol-backup', undefined],
      ['evm-prem', 'shared'],
      ['evm-backup', 'free'],
    ]);
    expect((await quotaShow(run)).accounts).toMatchObject([
      { name: 'shared', used: 500, nodes: ['sol-prem', 'evm-prem'], monthly_limit: 1000 },
      { name: 'free', used: 0, nodes: ['evm-backup'], monthly_limit: null },
    ]);

    const reset = await run('quota', 'reset', '--account', 'shared');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain(`reset account shared in ${dir}/quotas.json`);
    const file = JSON.parse(readFileSync(`${dir}/quotas.json`, 'utf8')) as Record<
      string,
      { used: number }
    >;
    // The pool is zeroed; its nodes' own usage is not.
    expect(file['account:shared']!.used).toBe(0);
    expect(file['sol-prem']!.used).toBe(300);

    // --all zeroes every node and every account.
    const all = await run('quota', 'reset', '--all', '--yes', '--json');
    expect(all.code, all.stderr).toBe(0);
    const zeroed = JSON.parse(all.stdout) as QuotaJson;
    expect(zeroed.nodes.every((node) => node.used === 0)).toBe(true);
    expect(zeroed.accounts!.map((account) => account.used)).toEqual([0, 0]);
    const both = await run('quota', 'reset', '--all', '--yes', '--account', 'shared');
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('error: give node names or accounts, or --all, not both\n');

    const unknown = await run('quota', 'reset', '--account', 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'error: unknown account(s): nope\nhint: known accounts: shared, free\n',
    );
  });

  it('groups status by chain and resets an account through the running server', async () => {
    const { dir, run } = await setup();
    const server = startCli(['serve', '--config', 'config.toml'], { cwd: dir });
    fixture.processes.push(server);
    const line = await server.waitFor(/cascade serving/);
    const url = (JSON.parse(line) as { url: string }).url;
    await server.waitFor(/admin listener/);
    for (let i = 0; i < 3; i++) expect(await post(`${url}/sol`, rpc('getSlot', i))).toBe(200);
    for (let i = 0; i < 2; i++) expect(await post(`${url}/base`, rpc('eth_getLogs', i))).toBe(200);

    const status = await run('status');
    expect(status.code, status.stderr).toBe(0);
    const text = status.stdout;
    expect(text).toContain('chain sol — /sol · ok, 2 of 2 nodes active');
    expect(text).toContain(
      'chain evm — /evm, /base, hosts base.example.com · ok, 2 of 2 nodes active',
    );
    expect(text.indexOf('sol-backup')).toBeLessThan(text.indexOf('chain evm'));
    expect(text).toMatch(/│ shared\s+│ sol-prem, evm-prem\s+│/);
    const doc = JSON.parse((await run('status', '--json')).stdout) as {
      nodes: Array<{ name: string; chain: string; credits_used: number }>;
      chains: Array<{ name: string }>;
      accounts: Array<{ name: string; credits_used: number }>;
    };
    expect(doc.nodes.map((node) => `${node.chain}/${node.name}`)).toEqual([
      'sol/sol-prem',
      'sol/sol-backup',
      'evm/evm-prem',
      'evm/evm-backup',
    ]);
    expect(doc.chains.map((chain) => chain.name)).toEqual(['sol', 'evm']);
    // The pool is what its nodes booked: 3 getSlot, 2 eth_getLogs at 75, and the start-up
    // eth_chainId that checks evm-prem against expect_chain.
    const credits = (name: string) => doc.nodes.find((node) => node.name === name)!.credits_used;
    const pool = credits('sol-prem') + credits('evm-prem');
    expect(pool).toBeGreaterThanOrEqual(153);
    expect(doc.accounts[0]).toEqual(
      expect.objectContaining({ name: 'shared', credits_used: pool }),
    );
    const percent = ((pool / 1000) * 100).toFixed(1);
    expect(text).toContain(`${pool} / 900 / 1,000 (${percent}%)`);

    const live = await quotaShow(run);
    expect(live.source).toBe('server');
    expect(live.accounts![0]).toMatchObject({ name: 'shared', used: pool });
    const reset = await run('quota', 'reset', '--account', 'shared');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/^reset account shared through the running server \(pid \d+\)\n/);
    const after = await quotaShow(run);
    expect(after.accounts![0]).toMatchObject({ name: 'shared', used: 0 });
    expect(after.nodes.find((node) => node.name === 'evm-prem')!.used).toBe(credits('evm-prem'));
  });
});

describe.skipIf(noRedis !== undefined)(
  `cascade quota with replicas and accounts${noRedis ? ` (skipped: ${noRedis})` : ''}`,
  () => {
    it('shows and resets an account pool in Redis when no server runs here', async () => {
      const redis = await startRedis();
      try {
        const { run } = await setup(
          `[cluster]\nredis_url = "redis://127.0.0.1:${redis.port}"\nkey_prefix = "q"`,
        );
        const period = periodStart(utcDay(new Date()), 15);
        // Redis keys name the pool URI-encoded, as every usage name is (account%3Ashared).
        const key = (kind: string) => `q:${kind}:${encodeURIComponent('account:shared')}:${period}`;
        redis.cli('SET', key('usage'), '640');
        const shown = await quotaShow(run);
        expect(shown.source).toBe('redis');
        expect(shown.accounts![0]).toMatchObject({ name: 'shared', used: 640 });
        const reset = await run('quota', 'reset', '--account', 'shared');
        expect(reset.code, reset.stderr).toBe(0);
        expect(reset.stdout).toContain('reset account shared for every replica (in Redis)');
        expect(redis.cli('GET', key('usage'))).toBe('');
        expect(redis.cli('GET', key('epoch'))).toBe('1');
        expect((await quotaShow(run)).accounts![0]).toMatchObject({ name: 'shared', used: 0 });
      } finally {
        await redis.stop();
      }
    });
  },
);
