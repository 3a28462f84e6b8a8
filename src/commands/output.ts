import Table from 'cli-table3';

/** A table for people: cli-table3 with plain borders and no colour codes in pipes. */
export function renderTable(
  head: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
): string {
  const table = new Table({
    head: [...head],
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    style: {
      head: process.stdout.isTTY ? ['cyan'] : [],
      border: process.stdout.isTTY ? ['grey'] : [],
    },
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}

/** Pretty JSON for `--json`, with a trailing newline. */
export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, (_key, v: unknown) => (v === Infinity ? null : v), 2)}\n`;
}

/** Formats a credit count with thousands separators; unmetered reads as such. */
export function formatCredits(value: number | undefined): string {
  if (value === undefined || value === Infinity) return 'unmetered';
  return value.toLocaleString('en-US');
}

/** A limit that may be absent (Infinity = no limit). */
export function formatLimit(value: number): string {
  return value === Infinity ? 'no limit' : value.toLocaleString('en-US');
}
