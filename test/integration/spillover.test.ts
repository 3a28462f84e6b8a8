import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startHeldUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** Requests waiting (for a token or a permit), from the rpc_sleep_queue_size gauge. */
async function sleeping(h: Harness): Promise<number> {
  return Number(/^rpc_sleep_queue_size (\d+)$/m.exec(await h.metrics())![1]);
}

function servedBy(h: Harness): Record<string, number> {
  return Object.fromEntries(
    Object.entries(h.mocks).map(([name, mock]) => [name, mock.stats().requests]),
  );
}

describe('route: spillover', () => {
  it('spills to tier 1 when tier 0 is rate-limited, without waiting', async () => {
    // The proxy's clock stands still: no token comes back however long the five requests take.
    harness = await startHarness(
      [
        { name: 'premium', tier: 0, rpsLimit: 2 },
        { name: 'backup', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    for (let i = 0; i < 5; i++) expect((await harness.post(rpc('getSlot', i))).status).toBe(200);
    expect(servedBy(harness)).toEqual({ premium: 2, backup: 3 });
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_skips_total\{node="premium",reason="rate_limit"\} 3/,
    );
  });

  it('spills when usage passes the threshold (strictly greater), and not before', async () => {
    // monthly 10 at 95 % → threshold 9; each getBalance costs 5.
    harness = await startHarness([
      { name: 'metered', tier: 0, monthlyLimit: 10, prices: { getBalance: 5 } },
      { name: 'free', tier: 1 },
    ]);
    for (let i = 0; i < 3; i++) await harness.post(rpc('getBalance', i));
    expect(servedBy(harness)).toEqual({ metered: 2, free: 1 });
    expect(harness.ledger.counter('metered').used).toBe(10);
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_skips_total\{node="metered",reason="quota_exhausted"\} 1/,
    );
  });

  it('never skips an unmetered node for quota', async () => {
    harness = await startHarness([{ name: 'unmetered', prices: { getBalance: 1_000_000 } }]);
    for (let i = 0; i < 5; i++) expect((await harness.post(rpc('getBalance', i))).status).toBe(200);
    expect(harness.ledger.counter('unmetered').used).toBe(5_000_000);
  });

  it('skips a node that does not price the method, spending no rate token', async () => {
    harness = await startHarness([
      { name: 'helius', tier: 0, rpsLimit: 1, prices: { getSlot: 1 }, unknownCost: null },
      { name: 'mirror', tier: 1 },
    ]);
    const first = await harness.post(rpc('eth_chainId'));
    expect(first.status).toBe(200);
    // The single token of helius is still there for a method it prices.
    await harness.post(rpc('getSlot'));
    expect(servedBy(harness)).toEqual({ helius: 1, mirror: 1 });
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_skips_total\{node="helius",reason="method_unsupported"\} 1/,
    );
  });

  it('answers 502 with the client id when no node prices the method', async () => {
    harness = await startHarness([{ name: 'only', prices: { getSlot: 1 }, unknownCost: null }]);
    const response = await harness.post(rpc('getBalance', 'abc'));
    expect(response.status).toBe(502);
    expect(response.json).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: 'All nodes failed with server/network errors (no rate limits to wait for)',
      },
      id: 'abc',
    });
  });

  it('spills to the next node when tier 0 is saturated', async () => {
    harness = await startHarness(
      [
        { name: 'busy', tier: 0, maxConcurrent: 1 },
        { name: 'spare', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    const busy = await startHeldUpstream();
    pointAt(harness, 'busy', busy.url);
    const first = harness.post(rpc('getSlot', 1));
    await expect.poll(() => busy.held).toBe(1);
    // busy's one permit is taken until the test releases its answer.
    expect((await harness.post(rpc('getSlot', 2))).status).toBe(200);
    busy.release();
    expect((await first).status).toBe(200);
    expect(busy.received).toBe(1);
    expect(harness.mocks.spare!.stats().requests).toBe(1);
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_skips_total\{node="busy",reason="saturated"\} 1/,
    );
  });

  it('waits for the earliest token refill when every node is rate-limited', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness([{ name: 'slow-plan', rpsLimit: 5 }], { clock });
    const h = harness;
    for (let i = 0; i < 5; i++) expect((await h.post(rpc('getSlot', i))).status).toBe(200);
    const sixth = h.post(rpc('getSlot', 6));
    await expect.poll(() => sleeping(h)).toBe(1);
    // One token every 200 ms: the request sleeps exactly that long instead of failing.
    await clock.advanceAsync(199);
    expect(await sleeping(h)).toBe(1);
    expect(h.mocks['slow-plan']!.stats().requests).toBe(5);
    clock.advance(1);
    expect((await sixth).status).toBe(200);
    expect(h.mocks['slow-plan']!.stats().requests).toBe(6);
    expect(await sleeping(h)).toBe(0);
  });

  it('answers 504 when the budget runs out waiting for a token', async () => {
    // A 300 ms budget against a plan whose next token is 1 s away.
    const clock = new ManualClock(1000);
    harness = await startHarness([{ name: 'one-per-second', rpsLimit: 1 }], {
      budgetMs: 300,
      clock,
    });
    const h = harness;
    await h.post(rpc('getSlot'));
    const pending = h.post(rpc('getSlot', 9));
    await expect.poll(() => sleeping(h)).toBe(1);
    await clock.advanceAsync(299);
    expect(await sleeping(h)).toBe(1);
    clock.advance(1);
    const response = await pending;
    expect(response.status).toBe(504);
    expect(response.json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Global timeout exceeded while retrying nodes' },
      id: 9,
    });
    expect(h.mocks['one-per-second']!.stats().requests).toBe(1);
    expect(await sleeping(h)).toBe(0);
  });

  it('never exceeds max_concurrent under concurrent load, and every request is served', async () => {
    // Answers are held until three are in flight, so reaching the cap never depends on speed,
    // and the standing clock never runs a waiting request out of budget.
    harness = await startHarness([{ name: 'capped', maxConcurrent: 3 }], {
      clock: new ManualClock(1000),
    });
    const capped = await startHeldUpstream();
    pointAt(harness, 'capped', capped.url);
    const pending = Array.from({ length: 30 }, (_, i) => harness!.post(rpc('getSlot', i)));
    for (let round = 0; round < 10; round++) {
      await expect.poll(() => capped.held).toBe(3);
      capped.release();
    }
    const answers = await Promise.all(pending);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(capped.received).toBe(30);
    expect(capped.peak).toBe(3);
  });

  it('bills a node once per request across retries, and bills failed attempts too', async () => {
    harness = await startHarness([
      {
        name: 'broken',
        tier: 0,
        prices: { getBalance: 7 },
        mock: { fault: { kind: 'http', status: 500, body: '<html>x</html>' } },
      },
      { name: 'good', tier: 1, prices: { getBalance: 3 } },
    ]);
    const response = await harness.post(rpc('getBalance'));
    expect(response.status).toBe(200);
    expect(harness.ledger.counter('broken').used).toBe(7);
    expect(harness.ledger.counter('good').used).toBe(3);
  });
});
