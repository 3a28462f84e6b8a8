/**
 * The TLS-amortization comparison (after the RPC Plane bench): the same naive client, a new
 * connection per request, once straight to the provider and once through cascade, whose pool
 * keeps warm connections to it. Summaries, the comparison and the JSON document.
 */
import {
  LatencyHistogram,
  type LatencySummary,
  type PercentilePoint,
} from './latency-histogram.js';
import type { MachineInfo } from './machine.js';
import type { NaiveRun } from './naive-client.js';

/** Which path a run took. */
export type TlsMode = 'direct' | 'proxy';

/** Mean connection-setup phases, ms. */
export interface SetupPhases {
  readonly dns: number;
  readonly tcp: number;
  readonly tls: number;
}

/** One path's figures. */
export interface TlsModeSummary {
  readonly mode: TlsMode;
  /** Where the naive client sent its requests (redacted). */
  readonly target: string;
  readonly requests: number;
  readonly succeeded: number;
  readonly failed: number;
  /** 0–1. */
  readonly successRate: number;
  readonly elapsedS: number;
  readonly requestsPerS: number;
  /** Issue → last byte, every request that got an answer. */
  readonly latencyMs: LatencySummary;
  /** Issue → connection ready, per request. */
  readonly setupMs: LatencySummary;
  readonly setupPhasesMeanMs: SetupPhases;
  readonly curve: readonly PercentilePoint[];
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly errors: Readonly<Record<string, number>>;
  readonly bytes: number;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/** Direct vs proxy for one figure. */
export interface FigurePair {
  readonly direct: number;
  readonly proxy: number;
  /** direct / proxy (>1: the proxy path is faster). */
  readonly speedup: number;
}

/** The headline comparison. */
export interface TlsComparison {
  readonly p50: FigurePair;
  readonly mean: FigurePair;
  readonly p99: FigurePair;
  readonly setupPerRequest: FigurePair;
  readonly successRate: { readonly direct: number; readonly proxy: number };
}

/** What was run, as the result file records it. */
export interface TlsParameters {
  readonly target: string;
  readonly proxy: string;
  readonly requests: number;
  readonly concurrency: number;
  readonly qps: number | null;
  readonly body: string;
  readonly method: string;
  /** Simulated round trip of the local mock; null for a real provider. */
  readonly rttMs: number | null;
  readonly warmupRequests: number;
  readonly timeoutMs: number;
}

/** results/tls-amortization.json */
export interface TlsReport {
  readonly benchmark: 'tls-amortization';
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly parameters: TlsParameters;
  readonly modes: Partial<Record<TlsMode, TlsModeSummary>>;
  readonly comparison: TlsComparison | null;
}

function increment(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** Summarizes one naive-client run. */
export function summarizeMode(mode: TlsMode, target: string, run: NaiveRun): TlsModeSummary {
  const latency = new LatencyHistogram();
  const setup = new LatencyHistogram();
  const statusCodes: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let succeeded = 0;
  let bytes = 0;
  let dns = 0;
  let tcp = 0;
  let tls = 0;
  for (const sample of run.samples) {
    if (sample.ok) succeeded++;
    bytes += sample.bytes;
    if (sample.error !== undefined) increment(errors, sample.error);
    else {
      increment(statusCodes, String(sample.status));
      latency.record(sample.latencyMs);
    }
    if (sample.setupMs > 0) setup.record(sample.setupMs);
    dns += sample.dnsMs;
    tcp += sample.tcpMs;
    tls += sample.tlsMs;
  }
  const n = run.samples.length;
  const summary: TlsModeSummary = {
    mode,
    target,
    requests: n,
    succeeded,
    failed: n - succeeded,
    successRate: n === 0 ? 0 : round(succeeded / n, 4),
    elapsedS: round(run.elapsedMs / 1000),
    requestsPerS: run.elapsedMs > 0 ? round((n * 1000) / run.elapsedMs, 2) : 0,
    latencyMs: latency.summary(),
    setupMs: setup.summary(),
    setupPhasesMeanMs: {
      dns: n ? round(dns / n) : 0,
      tcp: n ? round(tcp / n) : 0,
      tls: n ? round(tls / n) : 0,
    },
    curve: latency.curve(),
    statusCodes,
    errors,
    bytes,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
  };
  latency.destroy();
  setup.destroy();
  return summary;
}

function pair(direct: number, proxy: number): FigurePair {
  return { direct, proxy, speedup: proxy > 0 ? round(direct / proxy, 2) : 0 };
}

/** Direct vs proxy. */
export function compareModes(direct: TlsModeSummary, proxy: TlsModeSummary): TlsComparison {
  return {
    p50: pair(direct.latencyMs.p50, proxy.latencyMs.p50),
    mean: pair(direct.latencyMs.mean, proxy.latencyMs.mean),
    p99: pair(direct.latencyMs.p99, proxy.latencyMs.p99),
    setupPerRequest: pair(direct.setupMs.mean, proxy.setupMs.mean),
    successRate: { direct: direct.successRate, proxy: proxy.successRate },
  };
}

/** The JSON method name of a request body, or `request` when it has none. */
export function methodOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    const first: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
    const method = (first as { method?: unknown } | null)?.method;
    return typeof method === 'string' ? method : 'request';
  } catch {
    return 'request';
  }
}
