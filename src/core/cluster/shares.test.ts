import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShareGate, splitLimit } from './shares.js';

const demands = (...wanted: number[]) => wanted.map((w, i) => ({ member: `m${i}`, wanted: w }));

describe('splitLimit', () => {
  it('splits by demand in whole numbers that add up to the limit', () => {
    const shares = splitLimit(200, demands(700, 200, 100));
    expect([...shares.values()].reduce((a, b) => a + b)).toBe(200);
    expect(shares.get('m0')).toBeGreaterThan(shares.get('m1')!);
    expect(shares.get('m1')).toBeGreaterThan(shares.get('m2')!);
    expect(shares.get('m0')).toBeGreaterThanOrEqual(135);
  });

  it('splits evenly between idle members, and gives an idle member a little', () => {
    expect([...splitLimit(90, demands(0, 0, 0)).values()]).toEqual([30, 30, 30]);
    expect(splitLimit(100, demands(1000, 0)).get('m1')).toBeGreaterThan(0);
  });

  it('is the same whatever order members are listed in', () => {
    const a = splitLimit(17, [
      { member: 'b', wanted: 3 },
      { member: 'a', wanted: 3 },
      { member: 'c', wanted: 3 },
    ]);
    const b = splitLimit(17, [
      { member: 'c', wanted: 3 },
      { member: 'a', wanted: 3 },
      { member: 'b', wanted: 3 },
    ]);
    expect(a).toEqual(b);
  });

  it('keeps no limit unlimited', () => {
    expect(splitLimit(Infinity, demands(1, 2)).get('m0')).toBe(Infinity);
  });

  it('never hands out more than the limit, and never a fraction (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (limit, wanted) => {
          const shares = [...splitLimit(limit, demands(...wanted)).values()];
          expect(shares.every((s) => Number.isInteger(s) && s >= 0)).toBe(true);
          expect(shares.reduce((a, b) => a + b, 0)).toBe(limit);
        },
      ),
    );
  });
});

describe('ShareGate', () => {
  it('shrinks at once and grows once three syncs agree', () => {
    const gate = new ShareGate(100);
    expect(gate.next(100)).toBe(100);
    expect(gate.next(50)).toBe(50);
    expect(gate.next(100)).toBe(50);
    expect(gate.next(100)).toBe(50);
    expect(gate.next(100)).toBe(100);
  });

  it('keeps members applying at different moments within the limit while demand swings', () => {
    // Two members; the split swings every tick. Each applies one tick late or on time at random.
    const limit = 200;
    const gates = [new ShareGate(100), new ShareGate(100)];
    const applied = [100, 100];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const splits = Array.from({ length: 50 }, (_, k) =>
      splitLimit(limit, demands(k % 2 ? 300 : 10, k % 2 ? 10 : 300)),
    );
    const pending: Array<Array<number>> = [[], []];
    splits.forEach((split, k) => {
      [0, 1].forEach((i) => pending[i]!.push(gates[i]!.next(split.get(`m${i}`)!)));
      // Each member takes up its newest applied share now, or one tick later.
      [0, 1].forEach((i) => {
        const lag = random() < 0.5 ? 1 : 0;
        const queue = pending[i]!;
        while (queue.length > lag) applied[i] = queue.shift()!;
      });
      expect(applied[0]! + applied[1]!, `tick ${k}`).toBeLessThanOrEqual(limit);
    });
  });

  it('starts a newcomer at nothing: the sum stays within the limit while it joins', () => {
    const before = splitLimit(200, demands(10, 10));
    const after = splitLimit(200, demands(10, 10, 10));
    const old = [new ShareGate(), new ShareGate()];
    old[0]!.next(before.get('m0')!);
    old[1]!.next(before.get('m1')!);
    const newcomer = new ShareGate();
    // Sync 1: the newcomer sees three members, the old ones still two.
    const first = [
      old[0]!.next(before.get('m0')!),
      old[1]!.next(before.get('m1')!),
      newcomer.next(after.get('m2')!),
    ];
    expect(first[2]).toBe(0);
    expect(first.reduce((a, b) => a + b)).toBeLessThanOrEqual(200);
    // Sync 2: everyone sees three; the old ones shrink at once.
    const second = [
      old[0]!.next(after.get('m0')!),
      old[1]!.next(after.get('m1')!),
      newcomer.next(after.get('m2')!),
    ];
    expect(second.reduce((a, b) => a + b)).toBeLessThanOrEqual(200);
    // Once the syncs agree, the newcomer has its share.
    const third = [
      old[0]!.next(after.get('m0')!),
      old[1]!.next(after.get('m1')!),
      newcomer.next(after.get('m2')!),
    ];
    expect(third[2]).toBeGreaterThan(0);
    expect(third.reduce((a, b) => a + b)).toBeLessThanOrEqual(200);
  });
});
