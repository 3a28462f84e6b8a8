/** Writes a bench's result files into the output directory. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Writes `files` (name → contents) under `dir`, creating it; returns the absolute paths. */
export function writeResultFiles(dir: string, files: Readonly<Record<string, string>>): string[] {
  mkdirSync(dir, { recursive: true });
  return Object.entries(files).map(([name, contents]) => {
    const file = path.resolve(dir, name);
    writeFileSync(file, contents.endsWith('\n') ? contents : `${contents}\n`);
    return file;
  });
}

/** JSON for result files: two-space indent, non-finite numbers as null. */
export function resultJson(value: unknown): string {
  return `${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`;
}

/** A Markdown table. */
export function markdownTable(
  head: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  align?: ReadonlyArray<'left' | 'right'>,
): string {
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  const rule = head.map((_, i) => (align?.[i] === 'right' ? '---:' : '---'));
  return [line(head), line(rule), ...rows.map(line)].join('\n');
}
