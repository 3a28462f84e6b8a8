import { describe, expect, it } from 'vitest';
import { RESERVE_FACTOR, RESERVE_WINDOW, ReservationPace } from './reservation-pace.js';

/** The reserves a pace gives for running totals sampled once per sync. */
function reserves(totals: readonly number[]): number[] {
  const pace = new ReservationPace();
  return totals.map((total) => pace.next(total));
}

describe('ReservationPace', () => {
  it('holds nothing before anything was booked', () => {
    expect(reserves([0, 0, 0])).toEqual([0, 0, 0]);
  });

  it('holds twice the most booked between two syncs, over the recent window', () => {
    // Steps: 5, 3, 0, 8, 1.
    expect(reserves([5, 8, 8, 16, 17])).toEqual([10, 10, 10, 16, 16]);
    expect(RESERVE_FACTOR).toBe(2);
  });

  it('forgets a peak once it leaves the window, and releases everything when idle', () => {
    const totals = [20];
    for (let i = 0; i < RESERVE_WINDOW; i++) totals.push(20 + i + 1);
    const out = reserves(totals);
    expect(out[0]).toBe(40);
    expect(out[RESERVE_WINDOW - 1]).toBe(40);
    expect(out[RESERVE_WINDOW]).toBe(2);
    const pace = new ReservationPace();
    pace.next(7);
    for (let i = 0; i < RESERVE_WINDOW; i++) pace.next(7);
    expect(pace.next(7)).toBe(0);
  });

  it('a total that restarted from 0 (a reset) counts as no spending, not a negative one', () => {
    expect(reserves([9, 0, 2])).toEqual([18, 18, 18]);
    const pace = new ReservationPace();
    pace.next(9);
    pace.reset();
    expect(pace.next(3)).toBe(6);
  });
});
