/**
 * The admin quota routes with provider accounts (issue 28): GET /admin/quota lists each
 * account's pool beside the nodes, POST /admin/quota/reset takes `{"accounts": [...]}`, and
 * with replicas on Redis a pool reset on one replica reaches the others at their next sync,
 * as a node's does. A config without accounts answers as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startMultiChain, type MultiChain } from '../support/multi-chain.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { useAdminCascade } from '../support/admin-harness.js';
import { nodeConfig } from '../support/node-config.js';

const noRedis = redisUnavailable();
const started: MultiChain[] = [];
let redis: RedisServer | undefined;
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.close()));
  await redis?.stop();
  redis = undefined;
});

const rpc = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] });
const CHAINS = [
  { name: 'sol', nodes: [{ name: 'sol-prem', toml: 'tier = 0\naccount = "shared"' }] },
  { name: 'evm', nodes: [{ name: 'evm-prem', toml: 'tier = 0\naccount = "shared"' }] },
];
const ACCOUNTS = '[[accounts]]\nname = "shared"\nmonthly_limit = 1000\nreset_day = 15';

async function start(top: string): Promise<MultiChain> {
  const h = await startMultiChain(CHAINS, { top: `admin_port = 0\n${top}\n${ACCOUNTS}` });
  started.push(h);
  return h;
}

function admin(h: MultiChain, route: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${h.cascade.adminPort}${route}`, {
    method: body === undefined ? 'GET' : 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const pool = (h: MultiChain) => h.cascade.server.topology.account('shared')!.usage.used;

describe('the admin quota routes with provider accounts', () => {
  it('lists the pools beside the nodes and resets one by name', async () => {
    const h = await start('[cache]\nenabled = false');
    await h.post('/sol', rpc('getSlot', 1));
    await h.post('/evm', rpc('eth_blockNumber', 2));
    const shown = (await (await admin(h, '/admin/quota')).json()) as {
      nodes: Array<{ name: string; used: number }>;
      accounts: Array<Record<string, unknown>>;
    };
    expect(shown.nodes.map((node) => [node.name, node.used])).toEqual([
      ['sol-prem', 1],
      ['evm-prem', 1],
    ]);
    expect(shown.accounts).toEqual([
      expect.objectContaining({
        name: 'shared',
        nodes: ['sol-prem', 'evm-prem'],
        used: 2,
        monthly_limit: 1000,
        threshold: 950,
        percent_used: 0.2,
        reset_day: 15,
      }),
    ]);
    const refused = await admin(h, '/admin/quota/reset', { accounts: ['nope'] });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error: 'unknown account(s): nope; known accounts: shared',
    });
    const reset = await admin(h, '/admin/quota/reset', { accounts: ['shared'] });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toMatchObject({
      source: 'server',
      reset: [],
      reset_accounts: ['shared'],
      nodes: [
        { name: 'sol-prem', used: 1 },
        { name: 'evm-prem', used: 1 },
      ],
      accounts: [{ name: 'shared', used: 0 }],
    });
    expect(pool(h)).toBe(0);
  });

  it.skipIf(noRedis !== undefined)(
    `resets a pool for every replica through one of them${noRedis ? ` (skipped: ${noRedis})` : ''}`,
    async () => {
      redis = await startRedis();
      const cluster = (id: string) =>
        `[cluster]\nredis_url = "${redis!.url}"\nkey_prefix = "acct"\nreplica_id = "${id}"\nsync_interval_ms = 50\nlease_ttl_ms = 1000`;
      const a = await start(cluster('a'));
      const b = await start(cluster('b'));
      for (let i = 0; i < 3; i++) await a.post('/sol', rpc('getSlot', i));
      await b.post('/evm', rpc('eth_blockNumber', 9));
      // Both replicas hear the fleet's pool: 4 credits, booked on two replicas.
      await expect.poll(() => [pool(a), pool(b)]).toEqual([4, 4]);
      const reset = await admin(a, '/admin/quota/reset', { accounts: ['shared'] });
      expect(reset.status).toBe(200);
      await expect.poll(() => [pool(a), pool(b)]).toEqual([0, 0]);
      // The nodes' own usage is not the pool's: it stays.
      expect(b.cascade.server.topology.node('sol-prem')!.usage.used).toBe(3);
    },
  );
});

describe('the admin quota routes without accounts', () => {
  const startAdmin = useAdminCascade();

  it('answers GET /admin/quota with the nodes only, as before', async () => {
    const s = await startAdmin([nodeConfig({ name: 'a' })]);
    const shown = (await (await fetch(`${s.admin}/admin/quota`)).json()) as Record<string, unknown>;
    expect(Object.keys(shown)).toEqual(['source', 'pid', 'nodes']);
    const reset = await fetch(`${s.admin}/admin/quota/reset`, {
      method: 'POST',
      body: JSON.stringify({ nodes: ['a'] }),
    });
    expect(Object.keys((await reset.json()) as Record<string, unknown>)).toEqual([
      'source',
      'reset',
      'nodes',
    ]);
  });
});
