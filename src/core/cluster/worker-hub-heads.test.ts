import { describe, expect, it } from 'vitest';
import { Bound, Family, Level, headSlot, type RelayedReading } from '../chain/chain-state.js';
import { LocalUsageLedger } from '../quota/usage-ledger.js';
import { WorkerHub, type WorkerSync } from './worker-hub.js';

const LATEST = headSlot(Family.evm, Level.latest);

function report(heads?: RelayedReading[]): WorkerSync {
  return { t: 'sync', deltas: {}, demand: {}, penalties: [], ...(heads ? { heads } : {}) };
}

function hubAt(clock: { now: number }): WorkerHub {
  return new WorkerHub(
    new LocalUsageLedger(),
    () => [],
    () => clock.now,
  );
}

describe('WorkerHub relays node heads between workers', () => {
  it('tells every other worker once, with the age grown by the time it waited', () => {
    const clock = { now: 1000 };
    const hub = hubAt(clock);
    hub.add(1);
    hub.add(2);
    expect(hub.sync(2, report()).heads).toBeUndefined();
    // Worker 1 saw node "a" at block 500, 30 ms before it reported.
    expect(hub.sync(1, report([['a', LATEST, 500, Bound.exact, 30]])).heads).toBeUndefined();
    clock.now += 40;
    expect(hub.sync(2, report()).heads).toEqual([['a', LATEST, 500, Bound.exact, 70]]);
    // Told once; the reporter never hears its own reading back.
    expect(hub.sync(2, report()).heads).toBeUndefined();
    expect(hub.sync(1, report()).heads).toBeUndefined();
  });

  it('keeps the newest reading per node and commitment, and a head over a lower bound', () => {
    const clock = { now: 1000 };
    const hub = hubAt(clock);
    for (const id of [1, 2, 3]) hub.add(id);
    hub.sync(1, report([['a', LATEST, 510, Bound.exact, 0]]));
    // Older than the held one: dropped.
    hub.sync(2, report([['a', LATEST, 505, Bound.exact, 50]]));
    clock.now += 10;
    // Newer, but only "at least 400": adds nothing to a head known at 510.
    hub.sync(2, report([['a', LATEST, 400, Bound.atLeast, 0]]));
    expect(hub.sync(3, report()).heads).toEqual([['a', LATEST, 510, Bound.exact, 10]]);
    clock.now += 10;
    hub.sync(2, report([['a', LATEST, 512, Bound.exact, 0]]));
    expect(hub.sync(3, report()).heads).toEqual([['a', LATEST, 512, Bound.exact, 0]]);
  });

  it('tells a worker that joins later every reading held, and forgets old ones', () => {
    const clock = { now: 1000 };
    const hub = hubAt(clock);
    hub.add(1);
    hub.sync(1, report([['a', LATEST, 500, Bound.exact, 0]]));
    clock.now += 5000;
    hub.sync(1, report([['b', LATEST, 498, Bound.exact, 0]]));
    hub.add(2);
    expect(hub.sync(2, report()).heads).toEqual([
      ['a', LATEST, 500, Bound.exact, 5000],
      ['b', LATEST, 498, Bound.exact, 0],
    ]);
    clock.now += 11 * 60_000;
    hub.add(3);
    expect(hub.sync(3, report()).heads).toBeUndefined();
  });
});
