/**
 * The hot-path benchmark's numbers. Every scenario is measured as several short windows per
 * target, the targets taking turns (direct, reference, cascade, nginx, direct, …), so a
 * burst of noise from other processes or the host lands on one window of one target, not on
 * a whole target; a scenario's figures are the medians over its windows, kept with their
 * range. From those: latency added over the mocks, the cascade/reference and cascade/nginx
 * ratios, and the targets.
 */
import type { LoadResult } from './hotpath-load.js';

/** The things load is aimed at, in table order (keyed: cascade with a client key in the path). */
export const TARGET_NAMES = ['direct', 'reference', 'cascade', 'keyed', 'nginx'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/** CPU accounting around one measured window. */
export interface CpuWindow {
  readonly wallS: number;
  /** CPU seconds of the target's process(es); undefined for direct or when unreadable. */
  readonly targetCpuS?: number;
  /** CPU seconds of the mock process. */
  readonly mocksCpuS?: number;
  /**
   * Share of the proxy's CPU (CPU 1) busy with anything but the target — other processes,
   * interrupts: the noise of the window. Undefined when nothing is pinned.
   */
  readonly proxyCpuOthers?: number;
}

/** One window of one scenario on one target. */
export interface Window {
  readonly load: LoadResult;
  readonly cpu: CpuWindow;
}

/** A median with the range it came from. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** One scenario on one target: its windows and their medians. */
export interface Scenario {
  readonly windows: readonly Window[];
  readonly requests: number;
  readonly errors: number;
  readonly rps: Spread;
  readonly p50Us: Spread;
  readonly p99Us: Spread;
  readonly maxUs: number;
  /** Target CPU µs per answered request (proxies only). */
  readonly cpuUsPerRequest?: Spread;
  /** Share of one core the target used. */
  readonly cpuShare?: Spread;
  /** Share of one core the mock process used. */
  readonly mocksCpuShare?: Spread;
  /** Share of the proxy CPU used by others (noise). */
  readonly noise?: Spread;
  /** VmHWM of the target's process(es) after the scenario (process lifetime). */
  peakRssBytes?: number;
}

/** Everything measured on one target. */
export interface TargetResults {
  /** (a) closed loop, 50 connections, delay 0. */
  throughput?: Scenario;
  /** (b) one connection, closed loop. */
  oneConnection?: Scenario;
  /** (c) open loop at a fixed rate. */
  fixedRate?: Scenario;
  /** (d) closed loop, 200 connections, 5 ms upstream delay, fresh targets. */
  crowd?: Scenario;
}

export type Results = Partial<Record<TargetName, TargetResults>>;

function spread(values: readonly (number | undefined)[]): Spread | undefined {
  const known = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  if (known.length === 0) return undefined;
  const sorted = [...known].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

const cpuPerRequest = (w: Window): number | undefined =>
  w.cpu.targetCpuS === undefined || w.load.requests === 0
    ? undefined
    : (w.cpu.targetCpuS * 1e6) / w.load.requests;

/** Medians (and ranges) over a scenario's windows. */
export function summarise(windows: readonly Window[]): Scenario {
  const per = (pick: (w: Window) => number | undefined) => spread(windows.map(pick));
  const share = (pick: (c: CpuWindow) => number | undefined) =>
    per((w) => {
      const value = pick(w.cpu);
      return value === undefined ? undefined : value / w.cpu.wallS;
    });
  return {
    windows,
    requests: windows.reduce((sum, w) => sum + w.load.requests, 0),
    errors: windows.reduce((sum, w) => sum + w.load.errors, 0),
    rps: per((w) => w.load.rps)!,
    p50Us: per((w) => w.load.p50Us)!,
    p99Us: per((w) => w.load.p99Us)!,
    maxUs: Math.max(...windows.map((w) => w.load.maxUs)),
    cpuUsPerRequest: per(cpuPerRequest),
    cpuShare: share((c) => c.targetCpuS),
    mocksCpuShare: share((c) => c.mocksCpuS),
    noise: per((w) => w.cpu.proxyCpuOthers),
  };
}

/** Latency a proxy adds over the mocks alone (µs), from the medians. */
export interface Added {
  readonly p50Us: number;
  readonly p99Us: number;
}

/** Figures derived from the medians. */
export interface Derived {
  readonly addedOneConnection: Partial<Record<TargetName, Added>>;
  readonly addedFixedRate: Partial<Record<TargetName, Added>>;
  /** Median of the per-round ratios of (a) CPU per request (see pairedRatio). */
  readonly cpuRatioCascadeToReference?: number;
  /** The same for cascade with a client key in the path (issue 27: ≤ 1.10× the reference). */
  readonly cpuRatioKeyedToReference?: number;
  /** What the key adds: keyed cascade over plain cascade, per-round ratio. */
  readonly cpuRatioKeyedToCascade?: number;
  readonly rssRatioCascadeToReference?: number;
  readonly addedFixedRateRatioCascadeToNginx?: Added;
}

function added(
  results: Results,
  pick: (r: TargetResults) => Scenario | undefined,
): Partial<Record<TargetName, Added>> {
  const base = results.direct && pick(results.direct);
  const out: Partial<Record<TargetName, Added>> = {};
  if (!base) return out;
  for (const name of TARGET_NAMES) {
    const run = results[name] && pick(results[name]);
    if (name === 'direct' || !run) continue;
    out[name] = {
      p50Us: run.p50Us.median - base.p50Us.median,
      p99Us: run.p99Us.median - base.p99Us.median,
    };
  }
  return out;
}

const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b <= 0 ? undefined : a / b;

/**
 * Median over rounds of a/b CPU per request, window against window of the same round: the
 * machine's slow spells (which move both, seconds apart) cancel out of each pair.
 */
function pairedRatio(a: Scenario | undefined, b: Scenario | undefined): number | undefined {
  if (!a || !b) return undefined;
  const ratios = a.windows.map((w, i) => {
    const other = b.windows[i];
    return other === undefined ? undefined : ratio(cpuPerRequest(w), cpuPerRequest(other));
  });
  return spread(ratios)?.median;
}

/** Added latencies and ratios. */
export function derive(results: Results): Derived {
  const addedOneConnection = added(results, (r) => r.oneConnection);
  const addedFixedRate = added(results, (r) => r.fixedRate);
  const cascade = addedFixedRate.cascade;
  const nginx = addedFixedRate.nginx;
  return {
    addedOneConnection,
    addedFixedRate,
    cpuRatioCascadeToReference: pairedRatio(
      results.cascade?.throughput,
      results.reference?.throughput,
    ),
    cpuRatioKeyedToReference: pairedRatio(results.keyed?.throughput, results.reference?.throughput),
    cpuRatioKeyedToCascade: pairedRatio(results.keyed?.throughput, results.cascade?.throughput),
    rssRatioCascadeToReference: ratio(
      results.cascade?.crowd?.peakRssBytes,
      results.reference?.crowd?.peakRssBytes,
    ),
    addedFixedRateRatioCascadeToNginx:
      cascade && nginx
        ? {
            p50Us: ratio(cascade.p50Us, nginx.p50Us) ?? NaN,
            p99Us: ratio(cascade.p99Us, nginx.p99Us) ?? NaN,
          }
        : undefined,
  };
}

/** One of the targets, evaluated. */
export interface TargetCheck {
  readonly name: string;
  readonly value: number | undefined;
  readonly limit: number;
  /** undefined: could not be evaluated (a target was not run). */
  readonly met: boolean | undefined;
}

const check = (name: string, value: number | undefined, limit: number): TargetCheck => ({
  name,
  value,
  limit,
  met: value === undefined || Number.isNaN(value) ? undefined : value <= limit,
});

/** The targets (the 2,000 req/s one is checked at p50 and at p99). */
export function checkTargets(results: Results, derived: Derived): TargetCheck[] {
  const atRate = derived.addedFixedRateRatioCascadeToNginx;
  return [
    check('cpu_per_request_cascade_to_reference', derived.cpuRatioCascadeToReference, 1.1),
    check('cpu_per_request_keyed_to_reference', derived.cpuRatioKeyedToReference, 1.1),
    check('added_p50_one_connection_us', derived.addedOneConnection.cascade?.p50Us, 150),
    check('added_p50_at_rate_cascade_to_nginx', atRate?.p50Us, 1.5),
    check('added_p99_at_rate_cascade_to_nginx', atRate?.p99Us, 1.5),
    check('p99_200_connections_5ms_us', results.cascade?.crowd?.p99Us.median, 40_000),
    check('peak_rss_200_connections_cascade_to_reference', derived.rssRatioCascadeToReference, 1.2),
  ];
}
