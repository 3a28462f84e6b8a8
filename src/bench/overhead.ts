/**
 * Warm vs warm: the same fixed-rate keep-alive load straight to a node and through cascade;
 * the difference in latency is what the proxy adds (results/overhead.json and .md).
 */
import type { LatencySummary, PercentilePoint } from './latency-histogram.js';
import type { LoadRun } from './load-runner.js';
import { machineLine, type MachineInfo } from './machine.js';
import type { ProxyCost } from './load-report.js';
import { markdownTable, resultJson } from './result-files.js';

/** One path of the comparison. */
export interface OverheadPath {
  readonly target: string;
  readonly achievedRps: number;
  readonly responses: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly elapsedS: number;
  readonly latencyMs: LatencySummary;
  readonly curve: readonly PercentilePoint[];
}

/** What the overhead run was asked to do. */
export interface OverheadParameters {
  readonly rate: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly connections: number;
  readonly body: string;
  readonly upstreamDelayMs: number;
}

/** results/overhead.json */
export interface OverheadReport {
  readonly benchmark: 'overhead';
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly parameters: OverheadParameters;
  readonly direct: OverheadPath;
  readonly proxy: OverheadPath;
  /** proxy − direct, ms. */
  readonly addedMs: {
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly p99_9: number;
    readonly mean: number;
  };
  readonly proxyProcess: ProxyCost | null;
}

function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** One path's figures from its load run. */
export function overheadPath(target: string, run: LoadRun): OverheadPath {
  return {
    target,
    achievedRps: run.elapsedS > 0 ? round(run.ok / run.elapsedS, 1) : 0,
    responses: run.responses,
    ok: run.ok,
    non2xx: run.non2xx,
    errors: run.errors,
    elapsedS: run.elapsedS,
    latencyMs: run.latency.summary(),
    curve: run.latency.curve(),
  };
}

/** The report: both paths and the added latency. */
export function buildOverheadReport(
  machine: MachineInfo,
  parameters: OverheadParameters,
  direct: OverheadPath,
  proxy: OverheadPath,
  proxyProcess: ProxyCost | null,
  startedAt: string,
): OverheadReport {
  const added = (key: 'p50' | 'p90' | 'p99' | 'p99_9' | 'mean') =>
    round(proxy.latencyMs[key] - direct.latencyMs[key]);
  return {
    benchmark: 'overhead',
    startedAt,
    finishedAt: new Date().toISOString(),
    machine,
    parameters,
    direct,
    proxy,
    addedMs: {
      p50: added('p50'),
      p90: added('p90'),
      p99: added('p99'),
      p99_9: added('p99_9'),
      mean: added('mean'),
    },
    proxyProcess,
  };
}

const f = (value: number) => value.toFixed(3);

/** Rows: path, req/s, p50, p90, p99, p99.9, max, mean (ms). */
export function overheadRows(r: OverheadReport): string[][] {
  const row = (label: string, p: OverheadPath) => [
    label,
    p.achievedRps.toFixed(0),
    f(p.latencyMs.p50),
    f(p.latencyMs.p90),
    f(p.latencyMs.p99),
    f(p.latencyMs.p99_9),
    f(p.latencyMs.max),
    f(p.latencyMs.mean),
  ];
  const a = r.addedMs;
  return [
    row('Direct to the node (keep-alive)', r.direct),
    row('Through cascade (keep-alive)', r.proxy),
    ['Added by cascade', '', f(a.p50), f(a.p90), f(a.p99), f(a.p99_9), '', f(a.mean)],
  ];
}

/** Column names of overheadRows. */
export const OVERHEAD_HEAD = [
  'Path',
  'req/s',
  'p50 ms',
  'p90 ms',
  'p99 ms',
  'p99.9 ms',
  'max ms',
  'mean ms',
] as const;

/** results/overhead.md */
export function overheadMarkdown(r: OverheadReport): string {
  const p = r.parameters;
  const cost = r.proxyProcess
    ? `Proxy process: ${r.proxyProcess.cpuMicrosPerRequest} µs CPU per request, ${r.proxyProcess.cpuCores} cores, peak RSS ${r.proxyProcess.peakRssMiB} MiB.`
    : '';
  return [
    '# cascade bench overhead — warm vs warm',
    '',
    `- Machine: ${machineLine(r.machine)}`,
    `- Date: ${r.startedAt}`,
    `- Load: autocannon at ${p.rate} req/s overall (overallRate), ${p.connections} keep-alive connections, ${p.durationS} s per path after a ${p.warmupS} s warm-up; upstream: one mock node, delay ${p.upstreamDelayMs} ms; body ${p.body}`,
    '',
    markdownTable([...OVERHEAD_HEAD], overheadRows(r), [
      'left',
      'right',
      'right',
      'right',
      'right',
      'right',
      'right',
      'right',
    ]),
    '',
    `Both paths reuse their connections (the client's to the node or to cascade, cascade's pooled ones to the node), so the difference is the proxy's own work plus one extra loopback hop. autocannon's rate is a per-connection quota per second, sent back-to-back, so each second starts with a burst. ${cost}`,
    '',
  ].join('\n');
}

/** Every file of an overhead run. */
export function overheadResultFiles(r: OverheadReport): Record<string, string> {
  return { 'overhead.json': resultJson(r), 'overhead.md': overheadMarkdown(r) };
}
