/**
 * Billing-period arithmetic on UTC calendar days written as 'YYYY-MM-DD'.
 *
 * A node with `reset_day = r` starts a period in every month M on `s(M) = min(r, days in M)`, so
 * reset day 31 means "the last day" in short months (Feb 28/29, Apr 30). The period today belongs
 * to starts on the latest s(M) that is not after today: this month's s if today has reached it,
 * else the previous month's (January looks back to December of the year before). The next reset
 * is s of the month after that start. All arithmetic is on integers (no Date, no time zones):
 * `Date.UTC` maps years 0–99 to 1900–1999, and a local-time slip would move a reset by a day.
 * Day strings have four-digit years, so comparing two of them as strings compares the dates.
 */

/** A calendar day split into its parts; month is 1–12. */
interface CivilDay {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True when `year` is a Gregorian leap year. */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Number of days in `month` (1–12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** True when `text` is a real calendar day written 'YYYY-MM-DD' (year 0001–9999). */
export function isCalendarDay(text: string): boolean {
  return parseCivil(text) !== undefined;
}

/** The UTC calendar day of `date` as 'YYYY-MM-DD'. Throws RangeError for an invalid Date. */
export function utcDay(date: Date): string {
  const year = date.getUTCFullYear();
  if (Number.isNaN(year)) throw new RangeError('invalid Date');
  return formatCivil({ year, month: date.getUTCMonth() + 1, day: date.getUTCDate() });
}

/** First day of the billing period that `today` (UTC) belongs to, for a node's `resetDay`. */
export function periodStart(today: Date | string, resetDay: number): string {
  checkResetDay(resetDay);
  const t = toCivil(today);
  const thisStart = Math.min(resetDay, daysInMonth(t.year, t.month));
  if (t.day >= thisStart) return formatCivil({ ...t, day: thisStart });
  const prev =
    t.month === 1 ? { year: t.year - 1, month: 12 } : { year: t.year, month: t.month - 1 };
  return formatCivil({ ...prev, day: Math.min(resetDay, daysInMonth(prev.year, prev.month)) });
}

/**
 * Whether a saved period `marker` (its first day) is still in force when the period by today's
 * reset day starts on `current`: the same period, one that starts later (a reset_day moved
 * since), or a clock gone back. Only a marker before `current` has ended: its usage starts
 * over. Nodes, provider accounts and client keys all roll over by this rule.
 */
export function periodInForce(marker: string, current: string): boolean {
  // 'YYYY-MM-DD' strings order like the days they name.
  return marker >= current;
}

/** First day of the billing period after the one `today` (UTC) belongs to. */
export function nextReset(today: Date | string, resetDay: number): string {
  const start = toCivil(periodStart(today, resetDay));
  const next =
    start.month === 12
      ? { year: start.year + 1, month: 1 }
      : { year: start.year, month: start.month + 1 };
  return formatCivil({ ...next, day: Math.min(resetDay, daysInMonth(next.year, next.month)) });
}

/** Whole days from `fromDay` to `toDay` (negative when `toDay` is earlier). */
export function daysUntil(fromDay: Date | string, toDay: Date | string): number {
  return dayNumber(toCivil(toDay)) - dayNumber(toCivil(fromDay));
}

function checkResetDay(resetDay: number): void {
  if (!Number.isInteger(resetDay) || resetDay < 1 || resetDay > 31) {
    throw new RangeError(`reset day must be a whole number 1..31, got ${resetDay}`);
  }
}

function toCivil(value: Date | string): CivilDay {
  if (value instanceof Date) return toCivil(utcDay(value));
  const civil = parseCivil(value);
  if (civil === undefined) throw new RangeError(`not a calendar day 'YYYY-MM-DD': "${value}"`);
  return civil;
}

function parseCivil(text: string): CivilDay | undefined {
  const match = DAY_PATTERN.exec(text);
  if (match === null) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return undefined;
  }
  return { year, month, day };
}

function formatCivil({ year, month, day }: CivilDay): string {
  if (year < 1 || year > 9999) throw new RangeError(`year ${year} is outside 0001–9999`);
  const pad = (n: number, width: number): string => String(n).padStart(width, '0');
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** Days since 0000-03-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function dayNumber({ year, month, day }: CivilDay): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100);
  return era * 146097 + dayOfEra + dayOfYear;
}
