/**
 * Provider accounts (issue 28): one credit pool and one set of limits shared by nodes on
 * several chains. Under concurrent load on both chains the account books at most its
 * threshold plus one call's price, both chains spill to their backups once it passes it, the
 * upstreams saw exactly what was booked, and the pool survives a restart in quotas.json.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { restartCascade, startMultiChain, type MultiChain } from '../support/multi-chain.js';

let harness: MultiChain | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const rpc = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] });

/** Two chains, each with a premium node on the shared account and an unmetered backup. */
function accountChains(account: string): Promise<MultiChain> {
  return startMultiChain(
    [
      {
        name: 'sol',
        nodes: [
          { name: 'sol-prem', toml: 'tier = 0\naccount = "shared"' },
          { name: 'sol-backup', toml: 'tier = 1\nmonthly_limit = 0' },
        ],
      },
      {
        name: 'evm',
        nodes: [
          { name: 'evm-prem', toml: 'tier = 0\naccount = "shared"' },
          { name: 'evm-backup', toml: 'tier = 1\nmonthly_limit = 0' },
        ],
      },
    ],
    {
      // Budgets no busy machine exhausts (these lines land in [server]): an attempt that timed
      // out would be sent again to the backup, and the counts below would not add up.
      top:
        'request_timeout_ms = 30000\nattempt_timeout_ms = 15000\n' +
        `[cache]\nenabled = false\ncoalesce = false\n[[accounts]]\nname = "shared"\n${account}\n`,
    },
  );
}

function served(h: MultiChain, name: string): number {
  return h.mocks[name]!.stats().requests;
}

describe('a provider account shared by two chains', () => {
  it('books one pool under concurrent load on both chains, and both spill past it', async () => {
    harness = await accountChains('monthly_limit = 40\nspillover_percent = 100');
    const h = harness;
    const calls = Array.from({ length: 60 }, (_, i) => [
      h.post('/sol', rpc('getSlot', i)),
      h.post('/evm', rpc('eth_blockNumber', i)),
    ]).flat();
    const answers = await Promise.all(calls);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const premium = served(h, 'sol-prem') + served(h, 'evm-prem');
    const pool = h.cascade.server.topology.account('shared')!.usage.used;
    // One process books at admission: the pool stops one call's price past its threshold.
    expect(pool).toBeLessThanOrEqual(40 + 1);
    expect(pool).toBe(premium);
    // Both chains' premium nodes took part, and both spilled to their own backup.
    expect(served(h, 'sol-prem')).toBeGreaterThan(0);
    expect(served(h, 'evm-prem')).toBeGreaterThan(0);
    expect(served(h, 'sol-backup') + served(h, 'evm-backup')).toBe(120 - premium);
    // Past the threshold, every new call of either chain goes to its backup.
    const before = { sol: served(h, 'sol-backup'), evm: served(h, 'evm-backup') };
    await h.post('/sol', rpc('getSlot', 1000));
    await h.post('/evm', rpc('eth_blockNumber', 1001));
    expect(served(h, 'sol-backup')).toBe(before.sol + 1);
    expect(served(h, 'evm-backup')).toBe(before.evm + 1);
    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toContain('rpc_upstream_skips_total{node="sol-prem",reason="quota_exhausted"}');
  });

  it('keeps the pool in quotas.json across a restart, beside each node', async () => {
    harness = await accountChains('monthly_limit = 10\nspillover_percent = 100');
    const h = harness;
    for (let i = 0; i < 6; i++) {
      await h.post('/sol', rpc('getSlot', i));
      await h.post('/evm', rpc('eth_blockNumber', i));
    }
    await restartCascade(h);
    const file = JSON.parse(readFileSync(h.temp.path('quotas.json'), 'utf8')) as Record<
      string,
      { used: number }
    >;
    expect(file['account:shared']!.used).toBe(11);
    expect(file['sol-prem']!.used + file['evm-prem']!.used).toBe(11);
    // After the restart the pool is still past its threshold: the backups serve.
    const before = served(h, 'sol-prem') + served(h, 'evm-prem');
    await h.post('/sol', rpc('getSlot', 99));
    await h.post('/evm', rpc('eth_blockNumber', 99));
    expect(served(h, 'sol-prem') + served(h, 'evm-prem')).toBe(before);
    expect(h.cascade.server.topology.account('shared')!.usage.used).toBe(11);
  });

  it('holds the account rate limit across both chains, on top of each node', async () => {
    // 5 calls a second for the whole account, nodes unlimited: the rest spills at once.
    harness = await accountChains('monthly_limit = 0\nrps_limit = 5');
    const h = harness;
    const started = performance.now();
    const calls = Array.from({ length: 10 }, (_, i) => [
      h.post('/sol', rpc('getSlot', i)),
      h.post('/evm', rpc('eth_blockNumber', i)),
    ]).flat();
    await Promise.all(calls);
    const seconds = (performance.now() - started) / 1000;
    // The burst is the limit (5), and 5 more a second while the 20 calls were admitted.
    const premium = served(h, 'sol-prem') + served(h, 'evm-prem');
    expect(premium).toBeGreaterThanOrEqual(5);
    expect(premium).toBeLessThanOrEqual(5 + Math.ceil(5 * seconds));
    expect(served(h, 'sol-backup') + served(h, 'evm-backup')).toBe(20 - premium);
  });

  it('holds the account concurrency limit across both chains', async () => {
    harness = await accountChains('monthly_limit = 0\nmax_concurrent = 2');
    const h = harness;
    for (const name of ['sol-prem', 'evm-prem', 'sol-backup', 'evm-backup'])
      h.mocks[name]!.setBehaviour({ delayMs: 50 });
    const calls = Array.from({ length: 6 }, (_, i) => [
      h.post('/sol', rpc('getSlot', i)),
      h.post('/evm', rpc('eth_blockNumber', i)),
    ]).flat();
    await Promise.all(calls);
    const peak =
      h.mocks['sol-prem']!.stats().inFlightPeak + h.mocks['evm-prem']!.stats().inFlightPeak;
    expect(peak).toBeLessThanOrEqual(2 + 1);
    expect(h.mocks['sol-prem']!.stats().inFlightPeak).toBeLessThanOrEqual(2);
  });
});
