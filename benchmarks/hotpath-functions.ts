/**
 * Where a callgrind dump's instructions and first-level data-read misses sit, per function:
 * callgrind_annotate's self cost, with V8's JIT code (which valgrind sees as bare addresses)
 * named from the perf map node writes with `--perf-basic-prof` (/tmp/perf-PID.map: "start size
 * name" per compiled function, in hex). One JS function can be several rows of a dump (code
 * compiled again, several entry points); they are added up by name.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** One function's self cost in a dump (per request once divided). */
export interface FunctionCost {
  readonly name: string;
  readonly instructions: number;
  /** Undefined when the dump was taken without `--cache-sim=yes`. */
  readonly dataReadMisses: number | undefined;
}

/** A perf map's entries, sorted by start address, for lookups by address. */
export class PerfMap {
  readonly #starts: bigint[] = [];
  readonly #ends: bigint[] = [];
  readonly #names: string[] = [];

  constructor(text: string) {
    const rows: Array<{ start: bigint; end: bigint; name: string }> = [];
    for (const line of text.split('\n')) {
      const match = /^([0-9a-fA-F]+) ([0-9a-fA-F]+) (.+)$/.exec(line);
      if (match === null) continue;
      const start = BigInt(`0x${match[1]!}`);
      rows.push({ start, end: start + BigInt(`0x${match[2]!}`), name: match[3]! });
    }
    rows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    for (const row of rows) {
      this.#starts.push(row.start);
      this.#ends.push(row.end);
      this.#names.push(row.name);
    }
  }

  /** The function whose code holds `address`; the latest one listed wins a reused range. */
  nameOf(address: bigint): string | undefined {
    let low = 0;
    let high = this.#starts.length - 1;
    let found = -1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (this.#starts[mid]! <= address) {
        found = mid;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found >= 0 && address < this.#ends[found]! ? this.#names[found] : undefined;
  }
}

/** A function's name as printed: checkouts' paths cut to what follows them. */
export function shortName(name: string): string {
  return name
    .replace(/file:\/\/\/\S*?\/dist\//g, 'dist/')
    .replace(/\/\S*?\/node_modules\//g, 'node_modules/')
    .replace(/\/\S*?\/dist-benchmarks\//g, 'dist-benchmarks/')
    .replace(/ \[\/usr\/\S+\]$/, '');
}

/**
 * Rows of `callgrind_annotate --inclusive=no` output: counts, then `file:function`. With two
 * events shown, the second count is the data-read misses (a lone `.` where there were none).
 */
export function parseAnnotate(text: string, perfMap: PerfMap | undefined): FunctionCost[] {
  const byName = new Map<string, { instructions: number; misses: number | undefined }>();
  const row = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(?:(?:([\d,]+) \(\s*[\d.]+%\)|(\.))\s+)?(.*)$/;
  for (const line of text.split('\n')) {
    const match = row.exec(line);
    if (match === null || match[4]!.includes('PROGRAM TOTALS')) continue;
    const where = match[4]!.replace(/^\?\?\?:/, '');
    const address = /^0x([0-9a-fA-F]+) \[\?\?\?\]$/.exec(where);
    const named = address === null ? where : perfMap?.nameOf(BigInt(`0x${address[1]!}`));
    const name = shortName(named ?? (address === null ? where : 'JIT code (unnamed)'));
    const instructions = Number(match[1]!.replaceAll(',', ''));
    const misses =
      match[3] !== undefined
        ? 0
        : match[2] === undefined
          ? undefined
          : Number(match[2].replaceAll(',', ''));
    const seen = byName.get(name);
    if (seen === undefined) byName.set(name, { instructions, misses });
    else {
      seen.instructions += instructions;
      if (misses !== undefined) seen.misses = (seen.misses ?? 0) + misses;
    }
  }
  return [...byName].map(([name, cost]) => ({
    name,
    instructions: cost.instructions,
    dataReadMisses: cost.misses,
  }));
}

/**
 * The `top` functions of `dump` by self data-read misses (`withMisses`: the dump was taken with
 * `--cache-sim=yes`; else by instructions), JIT code named from `perfMapFile` when it exists.
 */
export function costByFunction(
  dump: string,
  withMisses: boolean,
  perfMapFile: string,
  top: number,
): FunctionCost[] {
  const show = withMisses ? ['--show=Ir,D1mr', '--sort=D1mr'] : ['--show=Ir', '--sort=Ir'];
  const result = spawnSync(
    'callgrind_annotate',
    ['--inclusive=no', '--threshold=100', ...show, dump],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (result.status !== 0) throw new Error(`callgrind_annotate ${dump} failed: ${result.stderr}`);
  const perfMap = existsSync(perfMapFile)
    ? new PerfMap(readFileSync(perfMapFile, 'utf8'))
    : undefined;
  const costs = parseAnnotate(result.stdout, perfMap);
  const key = (c: FunctionCost): number => (withMisses ? (c.dataReadMisses ?? 0) : c.instructions);
  return costs.sort((a, b) => key(b) - key(a)).slice(0, top);
}
