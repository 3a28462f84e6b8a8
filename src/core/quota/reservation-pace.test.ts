import { describe, expect, it } from 'vitest';
import {
  RESERVE_FACTOR,
  RESERVE_WINDOW,
  ReservationPace,
  earlySyncAt,
} from './reservation-pace.js';

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

  it('an early sync (asked at half the reserve) holds at least twice the reserve before it', () => {
    const pace = new ReservationPace();
    expect(pace.next(0)).toBe(0);
    expect(pace.next(3, true)).toBe(6); // from idle: the pace's own 2 × 3
    expect(pace.next(6, true)).toBe(12); // steps 3, 3: the pace says 6; doubled
    expect(pace.next(12, true)).toBe(24);
    // A timed sync goes back to the pace: twice the biggest step in the window.
    expect(pace.next(13)).toBe(12);
    expect(earlySyncAt(12)).toBe(6);
    expect(earlySyncAt(5)).toBe(3);
    expect(earlySyncAt(0)).toBe(1); // idle: the first credit asks
  });

  it('a total that restarted from 0 (a reset) counts as no spending, not a negative one', () => {
    expect(reserves([9, 0, 2])).toEqual([18, 18, 18]);
    const pace = new ReservationPace();
    pace.next(9);
    pace.reset();
    expect(pace.next(3)).toBe(6);
  });
});
