import { QuotaFileError } from '../errors.js';
import { isCalendarDay } from './billing-period.js';
import type { QuotaEntry, QuotaSnapshot } from './usage-ledger.js';

/** The two ways out of a quota file cascade refuses to trust. */
export const QUOTA_FILE_HINT =
  'fix the file by hand, or run `cascade quota reset --all` to rewrite it with every node at 0';

/**
 * quotas.json text for a snapshot: 2-space pretty JSON, names in UTF-8 byte order, each
 * `{"used": n, "period_start": "YYYY-MM-DD"}`, no trailing newline. Built by hand because
 * `JSON.stringify` puts integer-like keys ("10", "9") first whatever the insertion order.
 * Throws RangeError on a value `parseQuotaFile` would reject, so a write never blocks the next start.
 */
export function formatQuotaFile(snapshot: QuotaSnapshot): string {
  const entries = [...snapshot].sort(([a], [b]) => compareBytes(a, b));
  if (entries.length === 0) return '{}';
  const blocks = entries.map(([name, entry]) => {
    checkEntry(name, entry);
    // `unsent` only exists for replicas sharing usage through Redis, and only while > 0.
    const unsent = entry.unsent ? `,\n    "unsent": ${entry.unsent}` : '';
    return (
      `  ${JSON.stringify(name)}: {\n` +
      `    "used": ${entry.used},\n` +
      `    "period_start": ${JSON.stringify(entry.periodStart)}${unsent}\n` +
      `  }`
    );
  });
  return `{\n${blocks.join(',\n')}\n}`;
}

/**
 * Parses quotas.json text. Anything but an object of `{used, period_start}` entries throws a
 * QuotaFileError naming `file` and what is wrong. Fields other than those two are ignored.
 */
export function parseQuotaFile(text: string, file: string): QuotaSnapshot {
  const root = parseJson(text, file);
  if (!isPlainObject(root)) {
    throw invalid(file, `must be a JSON object keyed by node name, got ${kindOf(root)}`);
  }
  const snapshot = new Map<string, QuotaEntry>();
  const problems: string[] = [];
  for (const [name, value] of Object.entries(root)) {
    const entry = parseEntry(name, value, problems);
    if (entry !== undefined) snapshot.set(name, entry);
  }
  const [first] = problems;
  if (first !== undefined) {
    const others = problems.length - 1;
    const more = others > 0 ? ` (and ${others} more problem${others > 1 ? 's' : ''})` : '';
    throw invalid(file, first + more);
  }
  return snapshot;
}

function parseJson(text: string, file: string): unknown {
  if (text.trim() === '') throw invalid(file, 'is empty, expected a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw invalid(file, `is not valid JSON: ${oneLine(withLineColumn(reason, text))}`);
  }
}

function parseEntry(name: string, value: unknown, problems: string[]): QuotaEntry | undefined {
  const at = JSON.stringify(name);
  if (!isPlainObject(value)) {
    problems.push(`${at} must be an object {"used": …, "period_start": …}, got ${kindOf(value)}`);
    return undefined;
  }
  const { used, period_start: periodStart, unsent } = value;
  const before = problems.length;
  if (!isUsage(used)) problems.push(`${at}.used ${usageProblem(used)}`);
  if (
    unsent !== undefined &&
    (!isUsage(unsent) || (isUsage(used) && (unsent as number) > (used as number)))
  ) {
    problems.push(`${at}.unsent must be a whole number from 0 to "used", got ${show(unsent)}`);
  }
  if (typeof periodStart !== 'string' || !isCalendarDay(periodStart)) {
    problems.push(
      `${at}.period_start must be a calendar day "YYYY-MM-DD", got ${show(periodStart)}`,
    );
  }
  if (problems.length > before) return undefined;
  const entry = { used: used as number, periodStart: periodStart as string };
  return unsent ? { ...entry, unsent: unsent as number } : entry;
}

function usageProblem(used: unknown): string {
  if (typeof used === 'number' && Number.isInteger(used) && used > Number.MAX_SAFE_INTEGER) {
    return `is too large (at most ${Number.MAX_SAFE_INTEGER}), got ${show(used)}`;
  }
  return `must be a whole number ≥ 0, got ${show(used)}`;
}

function checkEntry(name: string, entry: QuotaEntry): void {
  if (!isUsage(entry.used)) {
    throw new RangeError(`usage of "${name}" is not a whole number ≥ 0: ${entry.used}`);
  }
  if (!isCalendarDay(entry.periodStart)) {
    throw new RangeError(`period start of "${name}" is not a calendar day: ${entry.periodStart}`);
  }
  if (entry.unsent !== undefined && (!isUsage(entry.unsent) || entry.unsent > entry.used)) {
    throw new RangeError(
      `unsent usage of "${name}" is not a whole number from 0 to used: ${entry.unsent}`,
    );
  }
}

/** Usage must survive a round trip through a JS number exactly. */
function isUsage(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${show(value)}`;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing (the key is missing)';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** V8 reports "at position N"; people editing the file by hand want a line and column. */
function withLineColumn(reason: string, text: string): string {
  const bare = reason.replace(/ \(line \d+ column \d+\)/, '');
  return bare.replace(/at position (\d+)/, (_match, offset: string) => {
    const before = text.slice(0, Number(offset));
    const line = before.split('\n').length;
    const column = before.length - before.lastIndexOf('\n');
    return `at line ${line} column ${column}`;
  });
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 120 ? `${flat.slice(0, 117)}...` : flat;
}

function invalid(file: string, what: string): QuotaFileError {
  return new QuotaFileError(`${file}: ${what}`, QUOTA_FILE_HINT);
}

/** Orders strings by their UTF-8 bytes, the order Rust's BTreeMap writes keys in. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
