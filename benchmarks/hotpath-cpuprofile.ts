/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time aggregated by function +
 * script (+ line, so two anonymous functions stay apart), and by module (node internals, a
 * package under node_modules, or a file of this repository). Used by `bench:hotpath --profile`
 * and on its own:
 *
 *     node dist-benchmarks/benchmarks/hotpath-cpuprofile.js PROFILE.cpuprofile [--top 15]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One row of the summary. */
export interface SelfTime {
  readonly name: string;
  readonly where: string;
  readonly selfMs: number;
  /** Share of all sampled time, idle included. */
  readonly percent: number;
  /** Share of the time not idle (what the proxy actually spent). */
  readonly busyPercent: number;
}

/** The summary of one profile. */
export interface ProfileSummary {
  readonly totalMs: number;
  readonly busyMs: number;
  readonly idleMs: number;
  /** Self time by function, idle left out. */
  readonly functions: readonly SelfTime[];
  readonly modules: readonly SelfTime[];
  /** Self time of every module (not cut to `top`). */
  readonly allModules: readonly SelfTime[];
  /** Inclusive (self + callees) time of this repository's functions (dist/, src/). */
  readonly ownInclusive: readonly SelfTime[];
}

const IDLE = new Set(['(idle)']);

function shortUrl(url: string): string {
  if (url === '') return '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) return url.slice(modules + 'node_modules/'.length);
  const dist = url.search(/\/(dist|dist-benchmarks|src|benchmarks)\//);
  if (dist !== -1) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

/** node:internal, the package name under node_modules, or the repository file. */
function moduleOf(url: string): string {
  if (url === '') return '(native / VM)';
  if (url.startsWith('node:')) return 'node: internals';
  if (url.startsWith('wasm://')) return 'wasm (undici llhttp parser)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  return shortUrl(url);
}

/** The part of a profile to count, in ms since the profile started. */
export interface ProfileWindow {
  readonly fromMs: number;
  readonly toMs: number;
}

/** Self time (ms) of every profile node, from the sample timestamps (inside `window`). */
function selfTimes(profile: CpuProfile, window: ProfileWindow | undefined): Map<number, number> {
  const self = new Map<number, number>();
  let at = profile.startTime;
  const stamps = profile.timeDeltas.map((delta) => (at += delta));
  const from = profile.startTime + (window?.fromMs ?? 0) * 1000;
  const to = window ? profile.startTime + window.toMs * 1000 : Infinity;
  for (let i = 0; i < profile.samples.length; i++) {
    if (stamps[i]! < from || stamps[i]! > to) continue;
    const next = i + 1 < stamps.length ? stamps[i + 1]! : profile.endTime;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + Math.max(0, next - stamps[i]!) / 1000);
  }
  return self;
}

function rows(
  totals: Map<string, { name: string; where: string; ms: number }>,
  totalMs: number,
  busyMs: number,
  top: number,
): SelfTime[] {
  return [...totals.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, top)
    .map((row) => ({
      name: row.name,
      where: row.where,
      selfMs: row.ms,
      percent: (100 * row.ms) / totalMs,
      busyPercent: IDLE.has(row.name) ? NaN : (100 * row.ms) / busyMs,
    }));
}

function keyOf(frame: CallFrame): { key: string; name: string; where: string } {
  const name = frame.functionName || '(anonymous)';
  const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '';
  return { key: `${name}\u0000${where}`, name, where };
}

const isOwn = (url: string): boolean =>
  /\/(dist|src)\//.test(url) && !url.includes('node_modules/');

/**
 * Inclusive time of this repository's functions: every sample counts once for each distinct
 * own function on its stack (recursion is not double counted).
 */
function ownInclusive(profile: CpuProfile, self: Map<number, number>) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const childIds = new Set(profile.nodes.flatMap((node) => node.children ?? []));
  const totals = new Map<string, { name: string; where: string; ms: number }>();
  const onStack = new Map<string, number>();
  const walk = (id: number): void => {
    const node = byId.get(id);
    if (!node) return;
    const own = isOwn(node.callFrame.url) ? keyOf(node.callFrame) : undefined;
    if (own) {
      if (!totals.has(own.key)) totals.set(own.key, { name: own.name, where: own.where, ms: 0 });
      onStack.set(own.key, (onStack.get(own.key) ?? 0) + 1);
    }
    const ms = self.get(id) ?? 0;
    if (ms > 0) for (const key of onStack.keys()) totals.get(key)!.ms += ms;
    for (const child of node.children ?? []) walk(child);
    if (own) {
      const depth = onStack.get(own.key)! - 1;
      if (depth === 0) onStack.delete(own.key);
      else onStack.set(own.key, depth);
    }
  };
  for (const node of profile.nodes) if (!childIds.has(node.id)) walk(node.id);
  return totals;
}

/** Aggregates a profile's self time by function and by module. */
export function summariseProfile(
  profile: CpuProfile,
  top = 15,
  window?: ProfileWindow,
): ProfileSummary {
  const self = selfTimes(profile, window);
  const byFunction = new Map<string, { name: string; where: string; ms: number }>();
  const byModule = new Map<string, { name: string; where: string; ms: number }>();
  let totalMs = 0;
  let idleMs = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id);
    if (!ms) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    totalMs += ms;
    if (IDLE.has(name)) idleMs += ms;
    const where = url ? `${shortUrl(url)}:${lineNumber + 1}` : '';
    const key = `${name}\u0000${where}`;
    if (!IDLE.has(name)) {
      const entry = byFunction.get(key) ?? { name, where, ms: 0 };
      entry.ms += ms;
      byFunction.set(key, entry);
    }
    const module = url ? moduleOf(url) : name.startsWith('(') ? name : '(native / VM)';
    const mod = byModule.get(module) ?? { name: module, where: '', ms: 0 };
    mod.ms += ms;
    byModule.set(module, mod);
  }
  const busyMs = totalMs - idleMs;
  return {
    totalMs,
    busyMs,
    idleMs,
    functions: rows(byFunction, totalMs, busyMs, top),
    modules: rows(byModule, totalMs, busyMs, top),
    allModules: rows(byModule, totalMs, busyMs, Infinity),
    ownInclusive: rows(ownInclusive(profile, self), totalMs, busyMs, top),
  };
}

/** Reads and summarises a .cpuprofile file. */
export function summariseProfileFile(
  file: string,
  top = 15,
  window?: ProfileWindow,
): ProfileSummary {
  return summariseProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, top, window);
}

/** Markdown tables of a summary. */
export function renderProfile(summary: ProfileSummary): string {
  const pct = (value: number) => (Number.isNaN(value) ? '—' : `${value.toFixed(1)}%`);
  const line = (row: SelfTime, i: number) =>
    `| ${i + 1} | \`${row.name}\` | ${row.where} | ${row.selfMs.toFixed(0)} | ${pct(row.percent)} | ${pct(row.busyPercent)} |`;
  const head = '| # | function | where | self ms | of total | of busy |\n|---|---|---|---|---|---|';
  return [
    `sampled ${summary.totalMs.toFixed(0)} ms: busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms`,
    '',
    'Self time by function (idle left out):',
    '',
    head,
    ...summary.functions.map(line),
    '',
    'Self time by module:',
    '',
    head.replace('function | where', 'module | '),
    ...summary.modules.map(line),
    '',
    "Inclusive time (self + callees) of this repository's functions:",
    '',
    head.replace('self ms', 'total ms'),
    ...summary.ownInclusive.map(line),
  ].join('\n');
}

/** Modules of this repository's core are summed into one row of the comparison. */
function comparisonGroup(module: string): string {
  if (/^(dist|src)\/core\//.test(module)) return 'cascade core (dist/core/*)';
  if (/^(dist-benchmarks\/)?benchmarks\//.test(module)) return 'reference proxy (benchmarks/*)';
  return module;
}

/**
 * Self time per request (µs) by module of two profiles side by side: what `b` spends that
 * `a` does not. `requestsA`/`requestsB`: requests answered while each profile was recorded.
 */
export function compareProfiles(
  a: { label: string; summary: ProfileSummary; requests: number },
  b: { label: string; summary: ProfileSummary; requests: number },
): string {
  const perRequest = (side: typeof a): Map<string, number> => {
    const map = new Map<string, number>();
    for (const row of side.summary.allModules) {
      if (row.name === '(idle)') continue;
      const group = comparisonGroup(row.name);
      map.set(group, (map.get(group) ?? 0) + (row.selfMs * 1000) / side.requests);
    }
    return map;
  };
  const left = perRequest(a);
  const right = perRequest(b);
  const names = [...new Set([...left.keys(), ...right.keys()])];
  const rowsOf = names
    .map((name) => ({ name, a: left.get(name) ?? 0, b: right.get(name) ?? 0 }))
    .sort((x, y) => y.b - y.a - (x.b - x.a))
    .filter((row) => row.a >= 0.05 || row.b >= 0.05);
  const sum = (side: Map<string, number>) => [...side.values()].reduce((t, v) => t + v, 0);
  return [
    `| module | ${a.label} µs/req | ${b.label} µs/req | Δ µs/req |`,
    '|---|---|---|---|',
    ...rowsOf.map(
      (row) =>
        `| ${row.name} | ${row.a.toFixed(2)} | ${row.b.toFixed(2)} | ${(row.b - row.a).toFixed(2)} |`,
    ),
    `| **busy total** | ${sum(left).toFixed(2)} | ${sum(right).toFixed(2)} | ${(sum(right) - sum(left)).toFixed(2)} |`,
  ].join('\n');
}

if (process.argv[1]?.endsWith('hotpath-cpuprofile.js')) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '15' } },
  });
  for (const file of positionals) {
    process.stdout.write(
      `${file}\n${renderProfile(summariseProfileFile(file, Number(values.top)))}\n`,
    );
  }
}
