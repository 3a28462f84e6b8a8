import { describe, expect, it } from 'vitest';
import { clientKey } from '../../../test/support/client-keys.js';
import { keyPeriods } from '../keys/key-periods.js';
import { LocalUsageLedger } from '../quota/usage-ledger.js';
import { coordinatedNodes } from './coordinated-nodes.js';
import { WorkerHub, type WorkerSync } from './worker-hub.js';

const WALL = Date.UTC(2026, 0, 15);
const KEY = clientKey('web', 'ck_hub_keys_0123456789abcdefghijk', {
  rpsLimit: 10,
  maxConcurrent: 4,
  perIpRps: 3,
});

function report(deltas: Record<string, number>, demand: [number, number]): WorkerSync {
  return { t: 'sync', deltas, demand: { 'key:web': demand }, penalties: [] };
}

describe('WorkerHub with client keys', () => {
  it("books every worker's key usage in one ledger and splits the key's limits by demand", () => {
    const ledger = new LocalUsageLedger();
    const counted = keyPeriods([KEY]);
    const hub = new WorkerHub(ledger, () =>
      coordinatedNodes([], ledger, WALL, () => undefined, counted),
    );
    hub.add(1);
    hub.add(2);
    let states = [hub.sync(1, report({}, [0, 0])), hub.sync(2, report({}, [0, 0]))];
    for (let round = 0; round < 6; round++) {
      hub.tick();
      // Worker 1 gets the key's traffic; worker 2 books a little of it too.
      states = [
        hub.sync(1, report({ 'key:web': 3 }, [40, 4])),
        hub.sync(2, report({ 'key:web': 1 }, [2, 1])),
      ];
    }
    expect(ledger.counter('key:web').used).toBe(24);
    // Each answer carries the total as of that report: worker 1 hears of worker 2's last 1 next.
    expect(states.map((state) => state.totals['key:web']![0])).toEqual([23, 24]);
    const [one, two] = states.map((state) => state.shares['key:web']!);
    // Whole shares adding up to each limit at most; the busy worker has most; per-IP too.
    expect(one![0]! + two![0]!).toBeLessThanOrEqual(10);
    expect(one![1]! + two![1]!).toBeLessThanOrEqual(4);
    expect(one![2]! + two![2]!).toBeLessThanOrEqual(3);
    expect(one![0]!).toBeGreaterThan(two![0]!);
    expect(one![2]!).toBeGreaterThanOrEqual(two![2]!);
    // Every worker keeps at least one of each limit the workers can all have one of.
    expect(two).toEqual([1, 1, 1]);
  });

  it('hands a worker the whole of a key’s limits when it is the only one left', () => {
    const ledger = new LocalUsageLedger();
    const hub = new WorkerHub(ledger, () =>
      coordinatedNodes([], ledger, WALL, () => undefined, keyPeriods([KEY])),
    );
    hub.add(1);
    hub.add(2);
    for (let round = 0; round < 4; round++) {
      hub.tick();
      hub.sync(1, report({}, [5, 1]));
      hub.sync(2, report({}, [5, 1]));
    }
    hub.remove(2);
    for (let round = 0; round < 4; round++) hub.tick();
    expect(hub.sync(1, report({}, [5, 1])).shares['key:web']).toEqual([10, 4, 3]);
  });
});
