import { afterEach, describe, expect, it } from 'vitest';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('reload while requests are in flight', () => {
  it('lets an in-flight request finish on the node it was sent to, even if the reload removes it', async () => {
    harness = await startHarness([
      { name: 'old', tier: 0, mock: { delayMs: 200 } },
      { name: 'new', tier: 0 },
    ]);
    const config = harness.server.config;
    const inFlight = harness.post(rpc('getSlot', 1));
    await expect.poll(() => harness!.mocks.old!.stats().inFlight).toBe(1);
    const { diff } = harness.server.reload({
      ...config,
      nodes: config.nodes.filter((n) => n.name === 'new'),
    });
    expect(diff.removed).toEqual(['old']);
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(harness.mocks.old!.stats().requests).toBe(1);
    await harness.post(rpc('getSlot', 2));
    expect(harness.mocks.new!.stats().requests).toBe(1);
  });

  it('picks up nodes added by a reload at the request’s next round', async () => {
    harness = await startHarness([
      {
        name: 'failing',
        tier: 0,
        mock: { delayMs: 200, fault: { kind: 'http', status: 500, body: '<html>down</html>' } },
      },
      { name: 'added-later', tier: 1 },
    ]);
    const full = harness.server.config;
    harness.server.reload({ ...full, nodes: full.nodes.filter((n) => n.name === 'failing') });
    const inFlight = harness.post(rpc('getSlot', 1));
    await expect.poll(() => harness!.mocks.failing!.stats().inFlight).toBe(1);
    harness.server.reload(full);
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(harness.mocks['added-later']!.stats().requests).toBe(1);
  });

  it('keeps a surviving node’s limiter, in-flight count, usage and penalty', async () => {
    harness = await startHarness([
      {
        name: 'keep',
        rpsLimit: 3,
        maxConcurrent: 2,
        prices: { getSlot: 4 },
        mock: { failFirst: 1, fault: { kind: 'close' } },
      },
    ]);
    await harness.post(rpc('getSlot', 1)); // fails: penalized, 1 token spent, 4 credits
    await harness.post(rpc('getSlot', 2)); // fail-open success: clears the penalty, 2nd token
    const node = harness.server.topology.node('keep')!;
    const config = harness.server.config;
    harness.server.reload({ ...config, nodes: config.nodes.map((n) => ({ ...n, tier: 3 })) });
    expect(harness.server.topology.node('keep')).toBe(node);
    expect(harness.ledger.counter('keep').used).toBe(8);
    // One token left of 3 (no fresh burst): the third request passes, the fourth waits.
    expect(node.takeToken(performance.now())).toBe(0);
    expect(node.takeToken(performance.now())).toBeGreaterThan(0);
    expect((await harness.health()).nodes[0]).toMatchObject({ tier: 3, status: 'up' });
  });
});
