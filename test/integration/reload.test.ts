import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startHeldUpstream, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

describe('reload while requests are in flight', () => {
  it('lets an in-flight request finish on the node it was sent to, even if the reload removes it', async () => {
    harness = await startHarness(
      [
        { name: 'old', tier: 0 },
        { name: 'new', tier: 0 },
      ],
      { clock: new ManualClock(1000) },
    );
    const old = await startHeldUpstream();
    pointAt(harness, 'old', old.url);
    const config = harness.server.config;
    const inFlight = harness.post(rpc('getSlot', 1));
    await expect.poll(() => old.held).toBe(1);
    const { diff } = harness.server.reload({
      ...config,
      nodes: config.nodes.filter((n) => n.name === 'new'),
    });
    expect(diff.removed).toEqual(['old']);
    old.release();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(old.received).toBe(1);
    await harness.post(rpc('getSlot', 2));
    expect(harness.mocks.new!.stats().requests).toBe(1);
  });

  it('picks up nodes added by a reload at the request’s next round', async () => {
    harness = await startHarness(
      [
        { name: 'failing', tier: 0 },
        { name: 'added-later', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    // failing answers 500, but only once the test has reloaded.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let arrived = false;
    pointAt(
      harness,
      'failing',
      await startUpstream((req, res) => {
        req.resume();
        arrived = true;
        void answered.then(() => res.writeHead(500).end('<html>down</html>'));
      }),
    );
    const full = harness.server.config;
    harness.server.reload({ ...full, nodes: full.nodes.filter((n) => n.name === 'failing') });
    const inFlight = harness.post(rpc('getSlot', 1));
    await expect.poll(() => arrived).toBe(true);
    harness.server.reload(full);
    answer();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(harness.mocks['added-later']!.stats().requests).toBe(1);
  });

  it('keeps a surviving node’s limiter, in-flight count, usage and penalty', async () => {
    // The proxy's clock stands still: no token comes back while the test runs.
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        {
          name: 'keep',
          rpsLimit: 3,
          maxConcurrent: 2,
          prices: { getSlot: 4 },
          mock: { failFirst: 1, fault: { kind: 'close' } },
        },
      ],
      { clock },
    );
    await harness.post(rpc('getSlot', 1)); // fails: penalized, 1 token spent, 4 credits
    await harness.post(rpc('getSlot', 2)); // fail-open success: clears the penalty, 2nd token
    const node = harness.server.topology.node('keep')!;
    const config = harness.server.config;
    harness.server.reload({ ...config, nodes: config.nodes.map((n) => ({ ...n, tier: 3 })) });
    expect(harness.server.topology.node('keep')).toBe(node);
    expect(harness.ledger.counter('keep').used).toBe(8);
    // One token left of 3 (no fresh burst): the third request passes, the fourth waits.
    expect(node.takeToken(clock.now())).toBe(0);
    expect(node.takeToken(clock.now())).toBe(1000 / 3);
    expect((await harness.health()).nodes[0]).toMatchObject({ tier: 3, status: 'up' });
  });
});
