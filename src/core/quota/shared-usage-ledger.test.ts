import { describe, expect, it } from 'vitest';
import { formatQuotaFile, parseQuotaFile } from './quota-format.js';
import { SharedUsageLedger, UNKNOWN_LIFE } from './shared-usage-ledger.js';

const DAY = '2026-12-01';

/** A ledger with `name` in period DAY, as the server sets it up. */
function ledgerWith(...names: string[]): SharedUsageLedger {
  const ledger = new SharedUsageLedger();
  for (const name of names) ledger.setPeriodStart(name, DAY);
  return ledger;
}

/** What a store does with a batch: adds its deltas to the fleet totals, acknowledges them. */
function apply(ledger: SharedUsageLedger, fleet: Map<string, number>, epoch = 0): void {
  const { deltas } = ledger.takeDeltas();
  for (const [name, delta] of deltas) fleet.set(name, (fleet.get(name) ?? 0) + delta);
  for (const [name, used] of fleet) ledger.settle(name, { used, epoch });
  ledger.acknowledge();
}

describe('SharedUsageLedger', () => {
  it('asks for a sync once, when what it has not sent reaches the armed level', () => {
    const ledger = ledgerWith('a', 'b');
    let asks = 0;
    const due = () => asks++;
    ledger.counter('a').add(3); // not armed: never asks
    expect([asks, ledger.takeSyncAsk('a')]).toEqual([0, false]);
    ledger.armSync('a', 5, due); // 3 unsent: below the level
    ledger.armSync('b', 1, due);
    ledger.counter('a').add(1);
    expect(asks).toBe(0);
    ledger.counter('a').add(1); // 5 unsent
    expect(asks).toBe(1);
    ledger.counter('a').add(50); // asked already: quiet until armed again
    expect(asks).toBe(1);
    expect([ledger.takeSyncAsk('a'), ledger.takeSyncAsk('a'), ledger.takeSyncAsk('b')]).toEqual([
      true,
      false,
      false,
    ]);
    ledger.takeDeltas(); // sent: nothing unsent now
    ledger.armSync('a', 5, due);
    expect(asks).toBe(1);
    ledger.counter('a').add(4);
    expect(asks).toBe(1);
    ledger.armSync('a', 4, due); // armed at a level already reached: asks at once
    expect(asks).toBe(2);
  });

  it('counts what this process booked at once, before any sync', () => {
    const ledger = ledgerWith('a');
    ledger.counter('a').add(3);
    ledger.counter('a').add(4);
    expect(ledger.counter('a').used).toBe(7);
    expect(ledger.unflushed('a')).toBe(7);
  });

  it('sends what was booked since the last batch, numbered; nothing booked sends nothing', () => {
    const ledger = ledgerWith('a', 'b');
    expect(ledger.takeDeltas()).toEqual({ seq: 0, deltas: new Map() });
    ledger.counter('a').add(5);
    ledger.counter('b').add(2);
    const first = ledger.takeDeltas();
    expect(first.deltas).toEqual(
      new Map([
        ['a', 5],
        ['b', 2],
      ]),
    );
    expect(first.seq).toBeGreaterThan(0);
    ledger.settle('a', { used: 5, epoch: 0 });
    ledger.settle('b', { used: 2, epoch: 0 });
    ledger.acknowledge();
    ledger.counter('a').add(1);
    const second = ledger.takeDeltas();
    expect(second.deltas).toEqual(new Map([['a', 1]]));
    expect(second.seq).toBe(first.seq + 1);
  });

  it('sends an unacknowledged batch again as it was, under the same number', () => {
    const ledger = ledgerWith('a');
    ledger.counter('a').add(5);
    const first = ledger.takeDeltas();
    // The reply timed out: no settle, no acknowledge. Meanwhile more is booked.
    ledger.counter('a').add(2);
    const again = ledger.takeDeltas();
    expect(again.seq).toBe(first.seq);
    expect(again.deltas).toEqual(new Map([['a', 5]]));
    expect(ledger.counter('a').used).toBe(7);
    ledger.settle('a', { used: 5, epoch: 0 });
    ledger.acknowledge();
    const next = ledger.takeDeltas();
    expect(next.seq).toBe(first.seq + 1);
    expect(next.deltas).toEqual(new Map([['a', 2]]));
  });

  it("takes the fleet's total from the store: other processes' usage counts here", () => {
    const ledger = ledgerWith('a');
    const fleet = new Map([['a', 100]]);
    ledger.counter('a').add(5);
    apply(ledger, fleet);
    expect(ledger.counter('a').used).toBe(105);
    expect(ledger.floor('a')).toBe(105);
    expect(ledger.unflushed('a')).toBe(0);
    // Booked while the batch is out: counted on top of the total once it settles.
    ledger.counter('a').add(3);
    const { deltas } = ledger.takeDeltas();
    ledger.counter('a').add(1);
    ledger.settle('a', { used: 105 + deltas.get('a')! + 50, epoch: 0 });
    ledger.acknowledge();
    expect(ledger.counter('a').used).toBe(105 + 3 + 50 + 1);
    expect(ledger.unflushed('a')).toBe(1);
  });

  it('never goes below the highest total it saw when the store lost its data', () => {
    const ledger = ledgerWith('a');
    ledger.counter('a').add(40);
    apply(ledger, new Map([['a', 960]]));
    expect(ledger.floor('a')).toBe(1000);
    // Redis restarted empty: it answers with only the new batch.
    ledger.counter('a').add(2);
    ledger.takeDeltas();
    ledger.settle('a', { used: 2, epoch: 0 });
    ledger.acknowledge();
    expect(ledger.counter('a').used).toBe(1002);
    expect(ledger.floor('a'), 'sent with the next sync to heal the store').toBe(1002);
  });

  it('takes a lower total in a new epoch (a reset elsewhere), dropping what it had sent', () => {
    const ledger = ledgerWith('a');
    ledger.counter('a').add(500);
    apply(ledger, new Map([['a', 500]]));
    ledger.counter('a').add(7);
    ledger.takeDeltas();
    ledger.settle('a', { used: 0, epoch: 1 });
    ledger.acknowledge();
    expect(ledger.counter('a').used).toBe(0);
    expect(ledger.epoch('a')).toBe(1);
    expect(ledger.floor('a')).toBe(0);
  });

  it('resets locally: zero usage, nothing left to send, a new epoch', () => {
    const ledger = ledgerWith('a');
    ledger.counter('a').add(9);
    apply(ledger, new Map([['a', 20]]));
    ledger.counter('a').add(4);
    ledger.reset('a');
    expect(ledger.counter('a').used).toBe(0);
    expect(ledger.epoch('a')).toBe(1);
    expect(ledger.unflushed('a')).toBe(0);
    expect(ledger.takeDeltas().deltas).toEqual(new Map());
    expect(ledger.periodStart('a')).toBe(DAY);
  });

  it('keeps what the store has not acknowledged in quotas.json, and sends it after a restart', () => {
    const ledger = ledgerWith('a', 'b');
    ledger.counter('a').add(10);
    apply(ledger, new Map([['a', 90]]));
    ledger.counter('a').add(4); // booked, not sent
    ledger.counter('b').add(1);
    ledger.takeDeltas(); // sent, not acknowledged: the process is killed here
    ledger.counter('a').add(2);
    const snapshot = ledger.snapshot();
    expect(snapshot.get('a')).toEqual({ used: 106, periodStart: DAY, unsent: 6 });
    expect(snapshot.get('b')).toEqual({ used: 1, periodStart: DAY, unsent: 1 });

    const text = formatQuotaFile(snapshot);
    const restarted = new SharedUsageLedger();
    for (const [name, entry] of parseQuotaFile(text, 'quotas.json')) restarted.restore(name, entry);
    expect(restarted.counter('a').used).toBe(106);
    expect(restarted.floor('a')).toBe(100);
    expect(restarted.takeDeltas().deltas).toEqual(
      new Map([
        ['a', 6],
        ['b', 1],
      ]),
    );
  });

  it('writes no unsent field once everything is acknowledged', () => {
    const ledger = ledgerWith('a');
    ledger.counter('a').add(3);
    apply(ledger, new Map());
    expect(ledger.snapshot().get('a')).toEqual({ used: 3, periodStart: DAY });
    expect(formatQuotaFile(ledger.snapshot())).not.toContain('unsent');
  });

  it('retires the nodes a reload removed, with their usage and period', () => {
    const ledger = ledgerWith('a', 'gone');
    ledger.counter('gone').add(8);
    expect(ledger.retain(['a'])).toEqual([{ name: 'gone', used: 8, periodStart: DAY }]);
    expect([...ledger.snapshot().keys()]).toEqual(['a']);
    expect(ledger.takeDeltas().deltas).toEqual(new Map());
  });

  it('refuses a period start that is not a calendar day', () => {
    expect(() => ledgerWith().setPeriodStart('a', '2026-02-30')).toThrow(/2026-02-30/);
  });

  it('sends its floor with the store life it was acknowledged in, so the store can tell a lost one', () => {
    const ledger = ledgerWith('a');
    expect([ledger.floor('a'), ledger.floorLife('a')]).toEqual([0, UNKNOWN_LIFE]);
    ledger.counter('a').add(4);
    ledger.takeDeltas();
    ledger.settle('a', { used: 10, epoch: 0, life: 'L1' });
    ledger.acknowledge();
    expect([ledger.floor('a'), ledger.floorLife('a')]).toEqual([10, 'L1']);
    // A primary's totals carry no life: the floor keeps the one it had.
    ledger.settle('a', { used: 12, epoch: 0 });
    expect([ledger.floor('a'), ledger.floorLife('a')]).toEqual([12, 'L1']);
    // Redis restarted: the next acknowledged total is of the new life.
    ledger.settle('a', { used: 15, epoch: 0, life: 'L2' });
    expect([ledger.floor('a'), ledger.floorLife('a')]).toEqual([15, 'L2']);
  });

  it('a floor restored from quotas.json is of no known life', () => {
    const ledger = ledgerWith('a');
    ledger.settle('a', { used: 3, epoch: 0, life: 'L1' });
    ledger.restore('a', { used: 9, periodStart: DAY, unsent: 2 });
    expect([ledger.floor('a'), ledger.floorLife('a')]).toEqual([7, UNKNOWN_LIFE]);
  });
});
