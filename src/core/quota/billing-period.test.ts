import { describe, expect, it } from 'vitest';
import {
  daysInMonth,
  daysUntil,
  isCalendarDay,
  nextReset,
  periodStart,
  utcDay,
} from './billing-period.js';

describe('periodStart', () => {
  it.each([
    // reset_day examples (README, "Credits and `cascade quota`")
    ['2026-08-17', 1, '2026-08-01'],
    ['2026-08-15', 15, '2026-08-15'],
    ['2026-08-14', 15, '2026-07-15'],
    ['2026-01-05', 15, '2025-12-15'],
    ['2026-02-28', 31, '2026-02-28'],
    ['2024-02-29', 31, '2024-02-29'],
    ['2026-02-27', 31, '2026-01-31'],
    ['2026-04-29', 31, '2026-03-31'],
    // first and last day of a month with reset day 1
    ['2026-08-01', 1, '2026-08-01'],
    ['2026-08-31', 1, '2026-08-01'],
    ['2026-01-01', 1, '2026-01-01'],
    ['2025-12-31', 1, '2025-12-01'],
    // February in leap and non-leap years
    ['2024-02-28', 31, '2024-01-31'],
    ['2024-02-28', 29, '2024-01-29'],
    ['2024-02-29', 29, '2024-02-29'],
    ['2025-02-28', 29, '2025-02-28'],
    ['2025-02-27', 29, '2025-01-29'],
    ['2024-03-01', 31, '2024-02-29'],
    ['2025-03-01', 31, '2025-02-28'],
    ['2100-02-28', 31, '2100-02-28'],
    ['2000-02-28', 31, '2000-01-31'],
    ['2000-02-29', 31, '2000-02-29'],
    // reset day 30 in February
    ['2026-02-28', 30, '2026-02-28'],
    ['2026-02-27', 30, '2026-01-30'],
    ['2024-02-29', 30, '2024-02-29'],
    ['2026-03-29', 30, '2026-02-28'],
    ['2026-03-30', 30, '2026-03-30'],
    // reset day 31 in 30-day months
    ['2026-04-30', 31, '2026-04-30'],
    ['2026-05-01', 31, '2026-04-30'],
    ['2026-05-30', 31, '2026-04-30'],
    ['2026-05-31', 31, '2026-05-31'],
    ['2026-06-30', 31, '2026-06-30'],
    ['2026-09-29', 31, '2026-08-31'],
    ['2026-11-30', 31, '2026-11-30'],
    // January rolls back to December of the previous year
    ['2026-01-14', 15, '2025-12-15'],
    ['2026-01-30', 31, '2025-12-31'],
    ['2026-01-31', 31, '2026-01-31'],
    ['2000-01-01', 2, '1999-12-02'],
  ])('(%s, reset day %i) starts on %s', (today, resetDay, expected) => {
    expect(periodStart(today, resetDay)).toBe(expected);
  });

  it('takes the UTC date of a Date, not the local one', () => {
    expect(periodStart(new Date('2026-08-14T23:59:59.999Z'), 15)).toBe('2026-07-15');
    expect(periodStart(new Date('2026-08-15T00:00:00.000Z'), 15)).toBe('2026-08-15');
    expect(periodStart(new Date('2026-08-15T01:00:00+02:00'), 15)).toBe('2026-07-15');
  });

  it.each([0, 32, 1.5, Number.NaN])('rejects reset day %s', (resetDay) => {
    expect(() => periodStart('2026-08-17', resetDay)).toThrow(RangeError);
  });

  it.each(['2026-8-17', '2026-02-30', '2026-13-01', 'today', '0000-01-01'])(
    'rejects the day "%s"',
    (today) => {
      expect(() => periodStart(today, 1)).toThrow(RangeError);
    },
  );

  it('rejects an invalid Date', () => {
    expect(() => periodStart(new Date('nope'), 1)).toThrow(RangeError);
  });
});

describe('nextReset', () => {
  it.each([
    ['2026-08-17', 1, '2026-09-01'],
    ['2026-08-15', 15, '2026-09-15'],
    ['2026-08-14', 15, '2026-08-15'],
    ['2026-01-05', 15, '2026-01-15'],
    ['2026-01-30', 31, '2026-01-31'],
    ['2026-01-31', 31, '2026-02-28'],
    ['2024-01-31', 31, '2024-02-29'],
    ['2026-02-28', 31, '2026-03-31'],
    ['2026-03-31', 31, '2026-04-30'],
    ['2026-02-28', 30, '2026-03-30'],
    // across the year end
    ['2025-12-31', 1, '2026-01-01'],
    ['2025-12-15', 15, '2026-01-15'],
    ['2025-12-14', 15, '2025-12-15'],
    ['2025-12-31', 31, '2026-01-31'],
    ['2026-01-01', 2, '2026-01-02'],
  ])('(%s, reset day %i) is %s', (today, resetDay, expected) => {
    expect(nextReset(today, resetDay)).toBe(expected);
  });

  it('is always after today and is the start of the next period', () => {
    for (let resetDay = 1; resetDay <= 31; resetDay++) {
      for (let day = 0; day < 800; day += 7) {
        const today = utcDay(new Date(Date.UTC(2023, 0, 1 + day)));
        const next = nextReset(today, resetDay);
        expect(next > today).toBe(true);
        expect(periodStart(next, resetDay)).toBe(next);
        expect(periodStart(today, resetDay) < next).toBe(true);
      }
    }
  });
});

describe('daysUntil', () => {
  it.each([
    ['2026-08-01', '2026-08-01', 0],
    ['2026-08-01', '2026-09-01', 31],
    ['2026-09-01', '2026-08-01', -31],
    ['2024-02-01', '2024-03-01', 29],
    ['2025-02-01', '2025-03-01', 28],
    ['2025-12-15', '2026-01-15', 31],
    ['2020-01-01', '2021-01-01', 366],
    ['2021-01-01', '2022-01-01', 365],
    ['1900-02-28', '1900-03-01', 1],
    ['0001-01-01', '9999-12-31', 3652058],
  ])('from %s to %s is %i days', (from, to, expected) => {
    expect(daysUntil(from, to)).toBe(expected);
  });

  it('agrees with Date arithmetic', () => {
    const base = Date.UTC(2020, 0, 1);
    for (let offset = -1000; offset <= 1000; offset += 37) {
      const day = utcDay(new Date(base + offset * 86_400_000));
      expect(daysUntil('2020-01-01', day)).toBe(offset);
    }
  });
});

describe('isCalendarDay', () => {
  it.each([
    ['2024-02-29', true],
    ['2025-02-29', false],
    ['2026-04-31', false],
    ['2026-12-31', true],
    ['2026-00-10', false],
    ['2026-01-00', false],
    ['26-01-01', false],
    ['2026-01-01T00:00:00Z', false],
    [' 2026-01-01', false],
    ['2026/01/01', false],
  ])('%s ⇒ %s', (text, expected) => {
    expect(isCalendarDay(text)).toBe(expected);
  });
});

describe('daysInMonth', () => {
  it.each([
    [2024, 2, 29],
    [2025, 2, 28],
    [1900, 2, 28],
    [2000, 2, 29],
    [2026, 4, 30],
    [2026, 12, 31],
  ])('%i-%i has %i days', (year, month, expected) => {
    expect(daysInMonth(year, month)).toBe(expected);
  });
});
