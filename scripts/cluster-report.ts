/**
 * The cluster benchmark's results (scripts/bench-cluster.ts) as data and as Markdown: every
 * window as measured, then medians per variant and the medians of per-round ratios (each
 * round runs both variants back to back, so a ratio compares windows under the same load).
 */

/** One closed-loop window of the workers part. */
export interface WorkersWindow {
  readonly variant: string;
  readonly round: number;
  readonly rps: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly errors: number;
  readonly proxyCpuUsPerRequest: number;
  /** CPU the proxy (primary + workers) used, in cores. */
  readonly proxyCores: number;
  readonly mocksCores: number;
  /** CPU the whole machine used (every process, other users' too), in cores. */
  readonly machineCores: number;
}

/** One window of the redis part: a fixed rate (0 = no traffic) through one variant. */
export interface RedisWindow {
  readonly variant: string;
  readonly round: number;
  readonly rate: number;
  readonly requests: number;
  readonly wallSeconds: number;
  readonly proxyCpuUsPerRequest: number;
  readonly proxyCores: number;
  readonly machineCores: number;
  /** Commands cascade sent to Redis (EVALSHA and connection set-up), per second. */
  readonly redisRoundTripsPerSecond: number;
  /** Commands run inside cascade's scripts, per second. */
  readonly redisCommandsInScriptPerSecond: number;
  readonly redisRoundTripsPerRequest: number;
  readonly redisCalls: Readonly<Record<string, number>> | undefined;
}

/** Everything one run wrote. */
export interface ClusterResults {
  date: string;
  commit: string;
  machine: {
    readonly nproc: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly os: string;
    readonly wrk: string;
  };
  options: {
    readonly seconds: number;
    readonly rounds: number;
    readonly rates: readonly number[];
    readonly connections: number;
  };
  /** /proc/loadavg's 1-minute figure before and after the run: how busy the machine was. */
  loadAverage: { readonly before: number; readonly after: number };
  workers: WorkersWindow[] | undefined;
  redis: RedisWindow[] | undefined;
  redisVersion: string | undefined;
}

/** The median of `values` (NaN for none). */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Per round, b's value over a's; the median and range of those ratios. */
export function roundRatios<T extends { variant: string; round: number }>(
  windows: readonly T[],
  a: string,
  b: string,
  value: (w: T) => number,
): { median: number; min: number; max: number } {
  const ratios: number[] = [];
  for (const wa of windows.filter((w) => w.variant === a)) {
    const wb = windows.find((w) => w.variant === b && w.round === wa.round);
    if (wb) ratios.push(value(wb) / value(wa));
  }
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const fixed = (n: number, digits = 2): string => n.toFixed(digits);
const us = (n: number): string => `${int(n)} µs`;
const ms = (n: number): string => `${(n / 1000).toFixed(2)} ms`;
const ratio = (r: { median: number; min: number; max: number }): string =>
  `${fixed(r.median, 3)}× (${fixed(r.min, 3)}–${fixed(r.max, 3)})`;

function workersTable(windows: readonly WorkersWindow[]): string[] {
  const of = (variant: string, pick: (w: WorkersWindow) => number): number =>
    median(windows.filter((w) => w.variant === variant).map(pick));
  const variants = ['workers-1', 'workers-2'];
  const row = (label: string, pick: (w: WorkersWindow) => number, show: (n: number) => string) =>
    `| ${label} | ${variants.map((v) => show(of(v, pick))).join(' | ')} |`;
  const rps = roundRatios(windows, 'workers-1', 'workers-2', (w) => w.rps);
  const cpu = roundRatios(windows, 'workers-1', 'workers-2', (w) => w.proxyCpuUsPerRequest);
  return [
    '| closed loop, 50 connections (medians) | 1 process | `--workers 2` |',
    '| --- | ---: | ---: |',
    row('req/s', (w) => w.rps, int),
    row('p50', (w) => w.p50Us, ms),
    row('p99', (w) => w.p99Us, ms),
    row('proxy CPU per request (primary + workers)', (w) => w.proxyCpuUsPerRequest, us),
    row(
      'proxy CPU busy, cores',
      (w) => w.proxyCores,
      (n) => fixed(n),
    ),
    row(
      'mock nodes CPU busy, cores',
      (w) => w.mocksCores,
      (n) => fixed(n),
    ),
    row(
      'whole machine busy, cores (all processes)',
      (w) => w.machineCores,
      (n) => fixed(n),
    ),
    row('errors', (w) => w.errors, int),
    '',
    `req/s, \`--workers 2\` / 1 process: ${ratio(rps)}; CPU per request: ${ratio(cpu)} ` +
      '(medians of per-round ratios, range in brackets).',
  ];
}

function redisTables(windows: readonly RedisWindow[], rates: readonly number[]): string[] {
  const at = (variant: string, rate: number) =>
    windows.filter((w) => w.variant === variant && w.rate === rate);
  const lines = [
    '| fixed rate | CPU/request, 1 process | CPU/request, Redis mode | Redis / 1 process (per-round ratios) | at most 3% more |',
    '| ---: | ---: | ---: | ---: | :---: |',
  ];
  const idleCores = (variant: string): number => median(at(variant, 0).map((w) => w.proxyCores));
  const compare = (rate: number, value: (w: RedisWindow) => number): string => {
    const single = median(at('single', rate).map(value));
    const redis = median(at('redis', rate).map(value));
    const r = roundRatios(
      windows.filter((w) => w.rate === rate),
      'single',
      'redis',
      value,
    );
    const within = r.median <= 1.03 ? 'yes' : '**no**';
    const achieved = median(at('redis', rate).map((w) => w.requests / w.wallSeconds));
    return `| ${int(rate)} req/s each (achieved ${int(achieved)}) | ${us(single)} | ${us(redis)} | ${ratio(r)} | ${within} |`;
  };
  for (const rate of rates) lines.push(compare(rate, (w) => w.proxyCpuUsPerRequest));
  lines.push(
    '',
    'CPU: every thread of each proxy process (/proc/<pid>/task/*/schedstat), over the window, ' +
      'per request answered. With no traffic at all the proxy used ' +
      `${fixed(idleCores('single') * 1000, 1)} ms of CPU per second without \`[cluster]\` and ` +
      `${fixed(idleCores('redis') * 1000, 1)} ms per second in Redis mode (the sync): a cost per ` +
      'second, not per request, so it weighs more per request at low rates.',
  );
  lines.push(
    '',
    '| traffic (Redis mode) | Redis commands sent / s | commands run in the script / s | commands sent per request |',
    '| ---: | ---: | ---: | ---: |',
  );
  const perSecond: number[] = [];
  for (const rate of [0, ...rates]) {
    const w = at('redis', rate);
    const sent = median(w.map((x) => x.redisRoundTripsPerSecond));
    perSecond.push(sent);
    const inScript = median(w.map((x) => x.redisCommandsInScriptPerSecond));
    const perRequest =
      rate === 0 ? '—' : fixed(median(w.map((x) => x.redisRoundTripsPerRequest)), 4);
    lines.push(
      `| ${rate === 0 ? 'none' : `${int(rate)} req/s`} | ${fixed(sent, 1)} | ${fixed(inScript, 1)} | ${perRequest} |`,
    );
  }
  const slope = (perSecond[2]! - perSecond[1]!) / (rates[1]! - rates[0]!);
  lines.push(
    '',
    `Commands per additional request (slope between ${int(rates[0]!)} and ${int(rates[1]!)} req/s): ` +
      `${fixed(slope, 5)} — the sync runs on a timer, never per request. (Fewer syncs per ` +
      'second under traffic, never more: on a saturated machine the timer fires late.)',
  );
  const sample = windows.find((w) => w.variant === 'redis' && w.rate === rates[1])?.redisCalls;
  if (sample) {
    const list = Object.entries(sample)
      .map(([name, calls]) => `${name} ${calls}`)
      .join(', ');
    lines.push('', `Commands of one ${int(rates[1]!)} req/s window (INFO commandstats): ${list}.`);
  }
  return lines;
}

/** The Markdown report. */
export function markdown(results: ClusterResults): string {
  const m = results.machine;
  const o = results.options;
  const lines = [
    '# Several workers, Redis mode: benchmark',
    '',
    `${results.date} — \`npm run bench:cluster\`, commit ${results.commit}.`,
    '',
    `Machine: \`nproc\` = ${m.nproc}, ${m.cpuModel} (/proc/cpuinfo), ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}; ` +
      `Redis ${results.redisVersion ?? '—'}; ${m.wrk}. Load generator (wrk for the closed loop, an ` +
      'open-loop undici client in the harness for fixed rates), two mock nodes (one process), ' +
      'Redis and the proxy all share these cores, and other work was running on the machine: ' +
      `each figure is the median of ${o.rounds} windows of ${o.seconds} s. So that load hits the ` +
      'variants compared alike, `--workers 2` and one process alternate window by window ' +
      '(A, B, A, B, …), and Redis mode and one process run side by side in the same windows, ' +
      'each with its own client at the same rate. ' +
      `Load average (1 min, /proc/loadavg) ${results.loadAverage.before} before the run and ` +
      `${results.loadAverage.after} after it, on ${m.nproc} cores.`,
    '',
  ];
  if (results.workers) {
    lines.push('## `--workers 2` vs one process', '', ...workersTable(results.workers), '');
  }
  if (results.redis) {
    lines.push(
      '## Redis mode vs one process without `[cluster]`',
      '',
      ...redisTables(results.redis, o.rates),
      '',
    );
  }
  return lines.join('\n');
}
