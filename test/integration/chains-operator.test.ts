/**
 * What an operator sees of chains and provider accounts (issue 28): /health gives each node
 * its chain and account, each chain its own status and each account its pool; the admin API
 * (cascade status, the status page) has the same; /metrics says which chain and account a
 * node belongs to (rpc_node_info), each account's pool, and counts each chain's requests once
 * whatever door they came through. A `[[nodes]]` config shows none of it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parseExposition } from '../../src/bench/prometheus-text.js';
import { nextReset } from '../../src/core/quota/billing-period.js';
import { startMultiChain, type MultiChain } from '../support/multi-chain.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';

let harness: MultiChain | undefined;
let plain: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await plain?.close();
  plain = undefined;
});

const rpc = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] });

/** Two chains; the premium node of each on one metered account, sol's backup on a free one. */
function twoChains(): Promise<MultiChain> {
  return startMultiChain(
    [
      {
        name: 'sol',
        nodes: [
          { name: 'sol-prem', toml: 'tier = 0\naccount = "shared"' },
          { name: 'sol-backup', toml: 'tier = 1\nmonthly_limit = 0\naccount = "free"' },
        ],
      },
      {
        name: 'evm',
        toml: 'paths = ["/evm", "/base"]\nhosts = ["base.example.com"]',
        nodes: [
          { name: 'evm-prem', toml: 'tier = 0\naccount = "shared"' },
          { name: 'evm-backup', toml: 'tier = 1\nmonthly_limit = 0' },
        ],
      },
    ],
    {
      top: [
        'admin_port = 0',
        '[cache]\nenabled = false\ncoalesce = false',
        '[[accounts]]\nname = "shared"\nmonthly_limit = 1000\nspillover_percent = 90\nrps_limit = 50\nmax_concurrent = 8\nreset_day = 15',
        '[[accounts]]\nname = "free"\nmonthly_limit = 0',
      ].join('\n'),
    },
  );
}

/** Three calls to sol and two to evm: the shared account books 5 credits. */
async function someTraffic(h: MultiChain): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await h.post('/sol', rpc('getSlot', i))).status).toBe(200);
  for (let i = 0; i < 2; i++)
    expect((await h.post('/evm', rpc('eth_blockNumber', i))).status).toBe(200);
}

async function json(url: string): Promise<Record<string, unknown>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

function adminUrl(h: MultiChain): string {
  return `http://127.0.0.1:${h.cascade.adminPort}`;
}

describe('/health with chains and accounts', () => {
  it('gives each node its chain and account, each chain its status, each account its pool', async () => {
    harness = await twoChains();
    await someTraffic(harness);
    const report = await json(`${harness.url}/health`);
    expect(Object.keys(report)).toEqual([
      'status',
      'active_nodes',
      'total_nodes',
      'nodes',
      'chains',
      'accounts',
    ]);
    const nodes = report.nodes as Record<string, unknown>[];
    // (`head`, the node's head as its answers showed it, follows as it always did.)
    expect(Object.keys(nodes[0]!).slice(0, 6)).toEqual([
      'name',
      'tier',
      'chain',
      'account',
      'status',
      'latency_ms',
    ]);
    expect(nodes.map((node) => [node.name, node.chain, node.account, node.status])).toEqual([
      ['sol-prem', 'sol', 'shared', 'up'],
      ['sol-backup', 'sol', 'free', 'unknown'],
      ['evm-prem', 'evm', 'shared', 'up'],
      ['evm-backup', 'evm', undefined, 'unknown'],
    ]);
    expect(report.chains).toEqual([
      { name: 'sol', paths: ['/sol'], hosts: [], status: 'ok', active_nodes: 2, total_nodes: 2 },
      {
        name: 'evm',
        paths: ['/evm', '/base'],
        hosts: ['base.example.com'],
        status: 'ok',
        active_nodes: 2,
        total_nodes: 2,
      },
    ]);
    expect(report.accounts).toEqual([
      {
        name: 'shared',
        used: 5,
        quota: 1000,
        threshold: 900,
        rps_limit: 50,
        max_concurrent: 8,
        reset_day: 15,
        next_reset: nextReset(new Date(), 15),
        nodes: ['sol-prem', 'evm-prem'],
      },
      {
        name: 'free',
        used: 0,
        quota: null,
        threshold: null,
        rps_limit: null,
        max_concurrent: null,
        reset_day: 1,
        next_reset: nextReset(new Date(), 1),
        nodes: ['sol-backup'],
      },
    ]);
  });

  it('judges each chain by its own nodes: one chain down leaves the other ok', async () => {
    harness = await twoChains();
    for (const name of ['evm-prem', 'evm-backup'])
      harness.mocks[name]!.setBehaviour({ fault: { kind: 'http', status: 503 }, failureRate: 1 });
    expect((await harness.post('/evm', rpc('eth_blockNumber', 1))).status).toBe(502);
    expect((await harness.post('/sol', rpc('getSlot', 2))).status).toBe(200);
    const report = await json(`${harness.url}/health`);
    expect(report).toMatchObject({ status: 'degraded', active_nodes: 2, total_nodes: 4 });
    expect(report.chains).toMatchObject([
      { name: 'sol', status: 'ok', active_nodes: 2, total_nodes: 2 },
      { name: 'evm', status: 'critical', active_nodes: 0, total_nodes: 2 },
    ]);
  });
});

describe('GET /admin/nodes with chains and accounts', () => {
  it('ranks each node within its chain and adds the chains and the accounts', async () => {
    harness = await twoChains();
    await someTraffic(harness);
    const doc = await json(`${adminUrl(harness)}/admin/nodes`);
    const rows = doc.nodes as Record<string, unknown>[];
    expect(rows.map((row) => [row.name, row.chain, row.account ?? null, row.rank])).toEqual([
      ['sol-prem', 'sol', 'shared', 1],
      ['sol-backup', 'sol', 'free', 2],
      ['evm-prem', 'evm', 'shared', 1],
      ['evm-backup', 'evm', null, 2],
    ]);
    expect(doc.chains).toEqual([
      { name: 'sol', paths: ['/sol'], hosts: [], status: 'ok', active_nodes: 2, total_nodes: 2 },
      {
        name: 'evm',
        paths: ['/evm', '/base'],
        hosts: ['base.example.com'],
        status: 'ok',
        active_nodes: 2,
        total_nodes: 2,
      },
    ]);
    const accounts = doc.accounts as Record<string, unknown>[];
    expect(accounts[0]).toEqual({
      name: 'shared',
      nodes: ['sol-prem', 'evm-prem'],
      rps: expect.any(Number) as number,
      rps_limit: 50,
      in_flight: 0,
      max_concurrent: 8,
      credits_used: 5,
      spillover_threshold: 900,
      monthly_limit: 1000,
      reset_day: 15,
      next_reset: nextReset(new Date(), 15),
      requests_last_minute: expect.any(Number) as number,
      failures_last_minute: 0,
    });
    expect(accounts[1]).toMatchObject({
      name: 'free',
      nodes: ['sol-backup'],
      credits_used: 0,
      monthly_limit: null,
      spillover_threshold: null,
      rps_limit: null,
    });
  });
});

/** A value of the exposition, by series name and labels. */
function valueOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  return parseExposition(text).samples.find(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  )?.value;
}

/** One message over a WebSocket to `url`; its answer. */
async function wsCall(url: string, body: unknown): Promise<unknown> {
  const socket = new WebSocket(url);
  try {
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const answer = new Promise<unknown>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))),
    );
    socket.send(JSON.stringify(body));
    return await answer;
  } finally {
    socket.close();
  }
}

describe('/metrics with chains and accounts', () => {
  it('says each node chain, account and tier in rpc_node_info, and each account pool', async () => {
    harness = await twoChains();
    await someTraffic(harness);
    const text = await (await fetch(`${harness.url}/metrics`)).text();
    for (const line of [
      'rpc_node_info{node="sol-prem",chain="sol",account="shared",tier="0"} 1',
      'rpc_node_info{node="sol-backup",chain="sol",account="free",tier="1"} 1',
      'rpc_node_info{node="evm-prem",chain="evm",account="shared",tier="0"} 1',
      'rpc_node_info{node="evm-backup",chain="evm",account="",tier="1"} 1',
      'rpc_account_credits_used{account="shared"} 5',
      'rpc_account_quota{account="shared"} 1000',
      'rpc_account_quota_threshold{account="shared"} 900',
      'rpc_account_credits_used{account="free"} 0',
      'rpc_account_quota{account="free"} +Inf',
      'rpc_account_quota_threshold{account="free"} +Inf',
    ])
      expect(text).toContain(`\n${line}\n`);
    // The node series keep their labels: no chain, no account.
    expect(text).toContain('\nrpc_node_quota_used{node="sol-prem"} 3\n');
  });

  it('counts each client request once in its chain: HTTP, batches and WebSocket alike', async () => {
    harness = await twoChains();
    const h = harness;
    const ws = h.url.replace('http', 'ws');
    await h.post('/sol', rpc('getSlot', 1));
    await h.post('/sol', [rpc('getSlot', 2), rpc('getSlot', 3), rpc('getSlot', 4)]);
    await wsCall(`${ws}/sol`, rpc('getSlot', 5));
    await wsCall(`${ws}/sol`, [rpc('getSlot', 6), rpc('getSlot', 7)]);
    await h.post('/base', rpc('eth_blockNumber', 8));
    const bad = await fetch(`${h.url}/evm`, { method: 'POST', body: '{"jsonrpc":' });
    expect(bad.status).toBe(400);
    const text = await (await fetch(`${h.url}/metrics`)).text();
    const chain = (name: string, outcome: string) =>
      valueOf(text, 'rpc_chain_requests_total', { chain: name, outcome });
    expect(chain('sol', 'forwarded')).toBe(4);
    expect(chain('sol', 'bad_request')).toBe(0);
    expect(chain('evm', 'forwarded')).toBe(1);
    expect(chain('evm', 'bad_request')).toBe(1);
    expect(chain('evm', 'timeout')).toBe(0);
    // Per chain adds up to the proxy's own count, outcome by outcome.
    for (const outcome of ['forwarded', 'bad_request', 'bad_gateway', 'timeout'])
      expect((chain('sol', outcome) ?? 0) + (chain('evm', outcome) ?? 0)).toBe(
        valueOf(text, 'rpc_requests_total', { outcome }),
      );
  });
});

describe('a [[nodes]] config', () => {
  it('keeps /health as it was, and names its one chain default in the new series', async () => {
    plain = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]);
    expect((await plain.post(rpc('getSlot', 1))).status).toBe(200);
    const report = (await plain.health()) as unknown as Record<string, unknown>;
    expect(Object.keys(report)).toEqual(['status', 'active_nodes', 'total_nodes', 'nodes']);
    const nodes = report.nodes as Record<string, unknown>[];
    for (const node of nodes) {
      expect(Object.keys(node).slice(0, 4)).toEqual(['name', 'tier', 'status', 'latency_ms']);
      expect(node).not.toHaveProperty('chain');
      expect(node).not.toHaveProperty('account');
    }
    const text = await plain.metrics();
    expect(text).toContain('\nrpc_node_info{node="a",chain="default",account="",tier="0"} 1\n');
    expect(text).toContain('\nrpc_chain_requests_total{chain="default",outcome="forwarded"} 1\n');
    expect(text).not.toContain('rpc_account_credits_used{');
  });
});
