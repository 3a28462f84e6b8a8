import { describe, expect, it } from 'vitest';
import { parseQuotaFile } from './quota-format.js';
import { assignMarker, rollover } from './rollover.js';
import { LocalUsageLedger, seedLedger } from './usage-ledger.js';

function ledgerWith(name: string, used: number, marker?: string): LocalUsageLedger {
  const ledger = new LocalUsageLedger();
  ledger.counter(name).add(used);
  if (marker !== undefined) ledger.setPeriodStart(name, marker);
  return ledger;
}

describe('rollover', () => {
  it('a node without a marker adopts the current start and keeps its usage', () => {
    const ledger = ledgerWith('n', 120);
    const events = rollover(ledger, [{ name: 'n', resetDay: 15 }], '2026-08-17');
    expect(events).toEqual([
      { kind: 'adopted', name: 'n', from: undefined, to: '2026-08-15', usedBefore: 120 },
    ]);
    expect(ledger.counter('n').used).toBe(120);
    expect(ledger.periodStart('n')).toBe('2026-08-15');
  });

  it.each([
    ['same period, same day', '2026-08-01', '2026-08-01'],
    ['same period, later day', '2026-08-01', '2026-08-31'],
    ['clock went backwards', '2026-09-01', '2026-08-20'],
    ['clock went back a year', '2027-08-01', '2026-08-20'],
  ])('%s ⇒ nothing changes', (_case, marker, today) => {
    const ledger = ledgerWith('n', 500, marker);
    expect(rollover(ledger, [{ name: 'n', resetDay: 1 }], today)).toEqual([]);
    expect(ledger.counter('n').used).toBe(500);
    expect(ledger.periodStart('n')).toBe(marker);
  });

  it.each([
    ['next period', '2026-07-01', '2026-08-01', 1, '2026-08-01', 31, false],
    ['next period, mid-month', '2026-07-15', '2026-08-20', 15, '2026-08-15', 31, false],
    ['end-of-month reset into February', '2026-01-31', '2026-02-28', 31, '2026-02-28', 28, false],
    ['two months (62 days is not long)', '2026-07-01', '2026-09-02', 1, '2026-09-01', 62, false],
    ['three months skipped', '2026-01-01', '2026-05-09', 1, '2026-05-01', 120, true],
    ['years skipped', '2020-01-01', '2026-08-17', 1, '2026-08-01', 2404, true],
  ])('%s ⇒ one reset', (_case, marker, today, resetDay, to, gapDays, longGap) => {
    const ledger = ledgerWith('n', 700, marker);
    const events = rollover(ledger, [{ name: 'n', resetDay }], today);
    expect(events).toEqual([
      { kind: 'reset', name: 'n', from: marker, to, usedBefore: 700, gapDays, longGap },
    ]);
    expect(ledger.counter('n').used).toBe(0);
    expect(ledger.periodStart('n')).toBe(to);
    expect(rollover(ledger, [{ name: 'n', resetDay }], today)).toEqual([]);
  });

  it('handles each node with its own reset day and ignores nodes not listed', () => {
    const ledger = new LocalUsageLedger();
    ledger.counter('a').add(1);
    ledger.setPeriodStart('a', '2026-07-01');
    ledger.counter('b').add(2);
    ledger.setPeriodStart('b', '2026-07-20');
    ledger.counter('c').add(3);
    ledger.setPeriodStart('off', '2020-01-01');
    const events = rollover(
      ledger,
      [
        { name: 'a', resetDay: 1 },
        { name: 'b', resetDay: 20 },
        { name: 'c', resetDay: 31 },
      ],
      new Date('2026-08-10T12:00:00Z'),
    );
    expect(events.map((e) => [e.name, e.kind, e.to])).toEqual([
      ['a', 'reset', '2026-08-01'],
      ['c', 'adopted', '2026-07-31'],
    ]);
    expect([ledger.counter('a').used, ledger.counter('b').used, ledger.counter('c').used]).toEqual([
      0, 2, 3,
    ]);
    expect(ledger.periodStart('off')).toBe('2020-01-01');
  });

  it('a restart across a boundary resets before the first request', () => {
    const snapshot = parseQuotaFile(
      '{"n":{"used":900,"period_start":"2020-01-01"}}',
      'quotas.json',
    );
    const ledger = new LocalUsageLedger();
    const counter = ledger.counter('n');
    seedLedger(ledger, snapshot, ['n']);
    expect(counter.used).toBe(900);
    const [event] = rollover(ledger, [{ name: 'n', resetDay: 1 }], '2026-08-17');
    expect(event).toMatchObject({ kind: 'reset', from: '2020-01-01', usedBefore: 900 });
    expect(counter.used).toBe(0);
    expect(ledger.periodStart('n')).toBe('2026-08-01');
    counter.add(1);
    expect(ledger.snapshot().get('n')).toEqual({ used: 1, periodStart: '2026-08-01' });
  });
});

describe('assignMarker', () => {
  it('gives a node added by reload the current start at once, keeping usage', () => {
    const ledger = ledgerWith('new', 4);
    expect(assignMarker(ledger, { name: 'new', resetDay: 31 }, '2026-04-29')).toBe('2026-03-31');
    expect(ledger.periodStart('new')).toBe('2026-03-31');
    expect(ledger.snapshot().get('new')).toEqual({ used: 4, periodStart: '2026-03-31' });
  });

  it('leaves a surviving node with its own marker (a reload never rolls over)', () => {
    const ledger = ledgerWith('old', 50, '2020-01-01');
    expect(assignMarker(ledger, { name: 'old', resetDay: 1 }, '2026-08-17')).toBeUndefined();
    expect(ledger.periodStart('old')).toBe('2020-01-01');
    expect(ledger.counter('old').used).toBe(50);
  });
});
