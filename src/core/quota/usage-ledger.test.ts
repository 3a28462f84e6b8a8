import { describe, expect, it } from 'vitest';
import { LocalUsageLedger, seedLedger } from './usage-ledger.js';
import type { QuotaEntry } from './usage-ledger.js';

const snapshotOf = (entries: Record<string, QuotaEntry>) => new Map(Object.entries(entries));

describe('LocalUsageLedger', () => {
  it('hands out the same counter for the same name on every call', () => {
    const ledger = new LocalUsageLedger();
    const a = ledger.counter('a');
    expect(ledger.counter('a')).toBe(a);
    expect(ledger.counter('b')).not.toBe(a);
    expect(a.name).toBe('a');
  });

  it('adds credits and reads them back', () => {
    const ledger = new LocalUsageLedger();
    const counter = ledger.counter('a');
    expect(counter.used).toBe(0);
    counter.add(10);
    counter.add(0);
    counter.add(5);
    expect(counter.used).toBe(15);
    expect(ledger.counter('b').used).toBe(0);
  });

  it('keeps the counter and usage when a name survives a reload', () => {
    const ledger = new LocalUsageLedger();
    const a = ledger.counter('a');
    a.add(7);
    ledger.retain(['a', 'new']);
    expect(ledger.counter('a')).toBe(a);
    expect(ledger.counter('a').used).toBe(7);
  });

  it('reset zeroes usage and keeps the period marker', () => {
    const ledger = new LocalUsageLedger();
    ledger.counter('a').add(42);
    ledger.setPeriodStart('a', '2026-08-01');
    ledger.reset('a');
    expect(ledger.counter('a').used).toBe(0);
    expect(ledger.periodStart('a')).toBe('2026-08-01');
  });

  it('has no marker until one is set', () => {
    const ledger = new LocalUsageLedger();
    ledger.counter('a').add(1);
    expect(ledger.periodStart('a')).toBeUndefined();
    ledger.setPeriodStart('a', '2026-08-15');
    expect(ledger.periodStart('a')).toBe('2026-08-15');
  });

  it.each(['2026-02-30', '2026-8-1', ''])('refuses the marker "%s"', (day) => {
    expect(() => new LocalUsageLedger().setPeriodStart('a', day)).toThrow(RangeError);
  });

  it('retain drops counters and markers of removed names and reports them', () => {
    const ledger = new LocalUsageLedger();
    const gone = ledger.counter('gone');
    gone.add(300);
    ledger.setPeriodStart('gone', '2026-08-01');
    ledger.setPeriodStart('marker-only', '2026-08-01');
    ledger.counter('stays').add(1);
    const retired = ledger.retain(['stays']);
    expect(retired).toEqual([
      { name: 'gone', used: 300, periodStart: '2026-08-01' },
      { name: 'marker-only', used: 0, periodStart: '2026-08-01' },
    ]);
    expect(ledger.periodStart('gone')).toBeUndefined();
    expect(ledger.counter('gone')).not.toBe(gone);
    expect(ledger.counter('gone').used).toBe(0);
    expect(ledger.retain(['stays', 'gone'])).toEqual([]);
  });

  it('snapshot holds nodes with a marker and omits those without one or removed', () => {
    const ledger = new LocalUsageLedger();
    ledger.counter('a').add(5);
    ledger.setPeriodStart('a', '2026-08-01');
    ledger.counter('no-marker').add(9);
    ledger.setPeriodStart('removed', '2026-08-01');
    ledger.setPeriodStart('unused', '2026-07-15');
    ledger.retain(['a', 'no-marker', 'unused']);
    expect(ledger.snapshot()).toEqual(
      snapshotOf({
        a: { used: 5, periodStart: '2026-08-01' },
        unused: { used: 0, periodStart: '2026-07-15' },
      }),
    );
  });

  it('snapshot is a copy: later usage does not change it', () => {
    const ledger = new LocalUsageLedger();
    ledger.setPeriodStart('a', '2026-08-01');
    const before = ledger.snapshot();
    ledger.counter('a').add(3);
    expect(before.get('a')?.used).toBe(0);
    expect(ledger.snapshot().get('a')?.used).toBe(3);
  });

  it('copes with names that are special in plain objects', () => {
    const ledger = new LocalUsageLedger();
    for (const name of ['__proto__', 'constructor', 'toString']) {
      ledger.counter(name).add(1);
      ledger.setPeriodStart(name, '2026-08-01');
    }
    expect([...ledger.snapshot().keys()]).toEqual(['__proto__', 'constructor', 'toString']);
  });
});

describe('seedLedger', () => {
  it('restores usage and markers of configured names and ignores the rest', () => {
    const ledger = new LocalUsageLedger();
    const counter = ledger.counter('a');
    counter.add(99);
    const seeded = seedLedger(
      ledger,
      snapshotOf({
        a: { used: 900, periodStart: '2020-01-01' },
        stranger: { used: 5, periodStart: '2026-08-01' },
      }),
      ['a', 'fresh'],
    );
    expect(seeded).toEqual(['a']);
    expect(counter.used).toBe(900);
    expect(ledger.periodStart('a')).toBe('2020-01-01');
    expect(ledger.counter('fresh').used).toBe(0);
    expect(ledger.periodStart('fresh')).toBeUndefined();
    expect(ledger.periodStart('stranger')).toBeUndefined();
    expect([...ledger.snapshot().keys()]).toEqual(['a']);
  });
});
