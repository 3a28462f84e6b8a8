/**
 * Per-method strategies seen from a client: `latency` methods go to the fastest measured node
 * whatever its tier, `cost` methods to the cheapest tier — and under `latency` every rate,
 * quota and price limit still binds. Latencies are set on the nodes (as measured answers
 * would) and the proxy runs on a ManualClock, so nothing depends on how fast the machine is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness, type TestNode } from '../support/proxy-harness.js';
import { metricValue, routingWith } from '../support/routing-config.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A slow tier-0 node and a fast tier-2 node, measured at 80 ms and 2 ms. */
async function start(fast: Partial<TestNode> = {}): Promise<Harness> {
  harness = await startHarness(
    [
      { name: 'slow0', tier: 0 },
      { name: 'fast2', tier: 2, ...fast },
    ],
    {
      clock: new ManualClock(),
      routing: routingWith({ getBalance: { strategy: 'cost' }, getSlot: { strategy: 'latency' } }),
    },
  );
  const [slow, quick] = harness.server.topology.table.all;
  slow!.ema.observe(80);
  quick!.ema.observe(2);
  harness.server.topology.rank();
  return harness;
}

function callsTo(h: Harness, node: string, method: string): number {
  return h.mocks[node]!.stats().byMethod[method] ?? 0;
}

describe('routing strategies', () => {
  it('sends latency methods to the fast tier-2 node and cost methods to tier 0', async () => {
    const h = await start();
    for (const method of ['getSlot', 'getLatestBlockhash', 'getBalance']) {
      expect((await h.post(rpc(method))).status).toBe(200);
    }
    expect(callsTo(h, 'fast2', 'getSlot')).toBe(1);
    expect(callsTo(h, 'fast2', 'getLatestBlockhash')).toBe(1); // a shipped latency method
    expect(callsTo(h, 'slow0', 'getBalance')).toBe(1);
    expect(callsTo(h, 'slow0', 'getSlot')).toBe(0);
    const text = await h.metrics();
    expect(metricValue(text, 'cascade_strategy_attempts_total', { strategy: 'latency' })).toBe(2);
    expect(metricValue(text, 'cascade_strategy_attempts_total', { strategy: 'cost' })).toBe(1);
  });

  it('counts batch elements under their own strategies, as the same requests alone', async () => {
    const h = await start();
    const reply = await h.post([
      rpc('getSlot', 1),
      rpc('getLatestBlockhash', 2),
      rpc('getBalance', 3),
    ]);
    expect(reply.status).toBe(200);
    expect(callsTo(h, 'fast2', 'getSlot')).toBe(1);
    expect(callsTo(h, 'slow0', 'getBalance')).toBe(1);
    const text = await h.metrics();
    expect(metricValue(text, 'cascade_strategy_attempts_total', { strategy: 'latency' })).toBe(2);
    expect(metricValue(text, 'cascade_strategy_attempts_total', { strategy: 'cost' })).toBe(1);
  });

  it("keeps a latency method inside the fast node's rate limit", async () => {
    // One token and a clock that never refills it: the second request must go elsewhere.
    const h = await start({ rpsLimit: 1 });
    await h.post(rpc('getSlot'));
    await h.post(rpc('getSlot'));
    expect(callsTo(h, 'fast2', 'getSlot')).toBe(1);
    expect(callsTo(h, 'slow0', 'getSlot')).toBe(1);
    const text = await h.metrics();
    expect(
      metricValue(text, 'rpc_upstream_skips_total', { node: 'fast2', reason: 'rate_limit' }),
    ).toBe(1);
  });

  it("keeps a latency method inside the fast node's quota and price list", async () => {
    // 10 credits a call against a spillover threshold of 9: one call, then it is over.
    const h = await start({ monthlyLimit: 10, prices: { getSlot: 10 }, unknownCost: null });
    await h.post(rpc('getSlot'));
    await h.post(rpc('getSlot'));
    await h.post(rpc('getLatestBlockhash')); // not priced by fast2 at all
    expect(callsTo(h, 'fast2', 'getSlot')).toBe(1);
    expect(callsTo(h, 'slow0', 'getSlot')).toBe(1);
    expect(callsTo(h, 'slow0', 'getLatestBlockhash')).toBe(1);
    expect(h.ledger.counter('fast2').used).toBe(10);
    const text = await h.metrics();
    expect(
      metricValue(text, 'rpc_upstream_skips_total', { node: 'fast2', reason: 'quota_exhausted' }),
    ).toBe(1);
  });
});
