import { describe, expect, it } from 'vitest';
import {
  KeyOverrideBook,
  budgetOverride,
  budgetValue,
  revokeField,
  type OverrideReply,
} from './key-overrides.js';

const SHA = 'ab'.repeat(32);
const FIELD = revokeField('web', SHA);

function reply(clock: number, fields: Record<string, [number, string]>): OverrideReply {
  return {
    clock,
    fields: new Map(
      Object.entries(fields).map(([field, [version, value]]) => [field, { version, value }]),
    ),
  };
}

/** A replica's book that has read Redis's clock (the same as its own). */
function aligned(): KeyOverrideBook {
  const book = new KeyOverrideBook();
  book.align(0, 0);
  return book;
}

describe('KeyOverrideBook', () => {
  it('names a revoke by the secret: a rotated key is another field', () => {
    expect(FIELD).toBe(`revoke:web:${SHA.slice(0, 16)}`);
    expect(revokeField('web', 'cd'.repeat(32))).not.toBe(FIELD);
  });

  it('holds a runtime budget only while the config budget it replaced is in force', () => {
    expect(budgetOverride(budgetValue(750, 500), 500)).toBe(750);
    expect(budgetOverride(budgetValue(750, 500), 600)).toBeUndefined();
    expect(budgetOverride(budgetValue(0, undefined), undefined)).toBe(0);
    expect(budgetOverride(budgetValue(undefined, 500), 500)).toBeUndefined();
    expect(budgetOverride(undefined, 500)).toBeUndefined();
  });

  it('versions a change by when it was made, and sends it until a sync took it', () => {
    const book = aligned();
    book.set(FIELD, '1', 1000);
    const first = book.outgoing();
    expect(first.fields).toEqual([{ field: FIELD, value: '1', version: 1000 }]);
    // The sync failed: nothing changes, the change goes again.
    expect(book.outgoing().fields).toEqual(first.fields);
    expect(book.merge(first, reply(7, { [FIELD]: [1000, '1'] }))).toEqual([]);
    expect(book.outgoing()).toMatchObject({ seen: 7, fields: [] });
    expect(book.entries()).toEqual([{ field: FIELD, value: '1', version: 1000 }]);
  });

  it('makes a change newer than every version it has seen, whatever its clock says', () => {
    const book = aligned();
    book.merge(book.outgoing(), reply(1, { [FIELD]: [5000, '1'] }));
    // This process's clock is behind the fleet's: its un-revoke still follows the revoke.
    book.set(FIELD, '0', 1000);
    expect(book.outgoing().fields).toEqual([{ field: FIELD, value: '0', version: 5001 }]);
  });

  it('keeps a change made while a sync ran, over what that sync read', () => {
    const book = aligned();
    book.set(FIELD, '1', 1000);
    const sent = book.outgoing();
    book.set(FIELD, '0', 1000);
    book.merge(sent, reply(1000, { [FIELD]: [1000, '1'] }));
    expect(book.value(FIELD)).toBe('0');
    expect(book.outgoing().fields).toEqual([{ field: FIELD, value: '0', version: 1001 }]);
  });

  it('takes the fleet’s newer change over one made here that waited, and says so', () => {
    const book = aligned();
    book.set(FIELD, '0', 1000);
    const sent = book.outgoing();
    // Redis held a change made later elsewhere: it kept that one.
    const changed = book.merge(sent, reply(9, { [FIELD]: [2000, '1'] }));
    expect(changed).toEqual([{ field: FIELD, value: '1', version: 2000, before: '0' }]);
    expect(book.value(FIELD)).toBe('1');
    expect(book.outgoing().fields).toEqual([]);
    // Two changes in the same millisecond: Redis's word holds.
    book.set('budget:web', '5@-', 3000);
    book.merge(book.outgoing(), reply(10, { 'budget:web': [3000, '6@-'] }));
    expect(book.value('budget:web')).toBe('6@-');
  });

  it('takes a newer version from the fleet and names what changed', () => {
    const book = aligned();
    book.merge(book.outgoing(), reply(1000, { [FIELD]: [1000, '1'] }));
    const changed = book.merge(book.outgoing(), reply(2000, { [FIELD]: [2000, '0'] }));
    expect(changed).toEqual([{ field: FIELD, value: '0', version: 2000, before: '1' }]);
    expect(book.value(FIELD)).toBe('0');
  });

  it('writes back what Redis lost or holds older, never reading a missing field as gone', () => {
    const book = aligned();
    const budget = 'budget:web';
    book.merge(book.outgoing(), reply(2000, { [FIELD]: [1000, '1'], [budget]: [2000, '5@-'] }));
    // Redis came back empty.
    expect(book.merge(book.outgoing(), reply(0, {}))).toEqual([]);
    expect(book.value(FIELD)).toBe('1');
    expect(book.outgoing().fields).toEqual([
      { field: FIELD, value: '1', version: 1000 },
      { field: budget, value: '5@-', version: 2000 },
    ]);
    // Redis back from an older snapshot: the newer budget goes back, the revoke it has.
    const healed = new KeyOverrideBook();
    healed.merge(healed.outgoing(), reply(2000, { [FIELD]: [1000, '1'], [budget]: [2000, '5@-'] }));
    healed.merge(healed.outgoing(), reply(1000, { [FIELD]: [1000, '1'], [budget]: [900, '9@-'] }));
    expect(healed.value(budget)).toBe('5@-');
    expect(healed.outgoing().fields).toEqual([{ field: budget, value: '5@-', version: 2000 }]);
  });

  it('hands a worker the whole book', () => {
    const primary = new KeyOverrideBook();
    primary.set(FIELD, '1', 1000);
    const worker = new KeyOverrideBook();
    worker.replace(primary.entries());
    expect(worker.value(FIELD)).toBe('1');
    // A worker never writes to the fleet.
    expect(worker.outgoing().fields).toEqual([]);
  });

  it('saves what it holds and, restored after a restart, sends what Redis never took and reads the fleet first', () => {
    const book = aligned();
    book.set(FIELD, '1', 1000);
    book.merge(book.outgoing(), reply(3, { [FIELD]: [1000, '1'] }));
    book.set('budget:web', '750@-', 1000);
    const saved = book.saved();
    expect(saved).toEqual([
      { field: 'budget:web', value: '750@-', version: 1001, pending: true },
      { field: FIELD, value: '1', version: 1000, pending: false },
    ]);

    const restarted = new KeyOverrideBook();
    restarted.restore(saved);
    expect(restarted.value(FIELD)).toBe('1');
    // The first sync sends no change made here: it reads Redis's clock first.
    expect(restarted.outgoing().fields).toEqual([]);
    restarted.align(2000, 2000);
    const push = restarted.outgoing();
    // The pending budget goes as a change made here; the fleet's book is read whatever its clock.
    expect(push.fields).toEqual([{ field: 'budget:web', value: '750@-', version: 1001 }]);
    expect(push.seen).toBe(-1);
    // Redis came back empty: the revoke it lost is written back under its version next time.
    restarted.merge(push, reply(0, {}));
    expect(restarted.outgoing().fields).toEqual([
      { field: 'budget:web', value: '750@-', version: 1001 },
      { field: FIELD, value: '1', version: 1000 },
    ]);
  });

  it("restored with an older word than the fleet holds, takes the fleet's", () => {
    const restarted = new KeyOverrideBook();
    restarted.restore([{ field: FIELD, value: '1', version: 500, pending: false }]);
    const changed = restarted.merge(restarted.outgoing(), reply(900, { [FIELD]: [900, '0'] }));
    expect(changed).toEqual([{ field: FIELD, value: '0', version: 900, before: '1' }]);
    expect(restarted.value(FIELD)).toBe('0');
    expect(restarted.outgoing().fields).toEqual([]);
  });

  it('restamps changes made before it read Redis’s clock, and brings back a change stamped ahead of it', () => {
    const book = new KeyOverrideBook();
    book.merge(book.outgoing(), reply(1, { [FIELD]: [10_000, '1'] }));
    // This process's clock is an hour ahead; Redis's clock unknown yet: stamped on its own.
    book.set(FIELD, '0', 3_600_000 + 20_000);
    expect(book.outgoing().fields).toEqual([]);
    book.align(20_500, 3_600_000 + 20_500);
    expect(book.outgoing().fields).toEqual([{ field: FIELD, value: '0', version: 20_000 }]);
    // Later changes go on Redis's clock straight away.
    book.set('budget:web', '5@-', 3_600_000 + 30_000);
    expect(book.outgoing().fields).toContainEqual({
      field: 'budget:web',
      value: '5@-',
      version: 30_000,
    });

    // A change saved by a process whose clock was ahead, restored by this one: brought back.
    const restarted = new KeyOverrideBook();
    restarted.restore([{ field: FIELD, value: '0', version: 3_650_000, pending: true }]);
    restarted.align(50_000, 50_000);
    expect(restarted.outgoing().fields).toEqual([{ field: FIELD, value: '0', version: 50_000 }]);
  });
});
