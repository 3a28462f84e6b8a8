/**
 * The figures of a load run (CascadeRPC's Run 1 / Run 2): client throughput and latency,
 * per-node successes and local rate-limit rejections from the proxy's /metrics before and
 * after, and the proxy process's CPU per request and peak memory.
 */
import type { LatencySummary, PercentilePoint } from './latency-histogram.js';
import { throughputOf, type LoadRun } from './load-runner.js';
import type { MachineInfo } from './machine.js';
import type { ProcessReading } from './process-stats.js';
import { perNode, samplesOf, type Exposition } from './prometheus-text.js';

/** A node as the bench planned it (limits after scaling). */
export interface PlannedNode {
  readonly name: string;
  readonly tier: number;
  /** req/s limit the proxy enforces; null = none. */
  readonly rpsLimit: number | null;
  /** Mock latency, ms; null when unknown (an external proxy). */
  readonly delayMs: number | null;
}

/** What a load run was asked to do. */
export interface LoadParameters {
  readonly durationS: number;
  readonly warmupS: number;
  /** Unmeasured seconds at the start of the measured run (same connections, no pause). */
  readonly leadInS: number;
  readonly connections: number;
  readonly body: string;
  /** Factor applied to the base config's rps_limit values; null for an external proxy. */
  readonly limitsScale: number | null;
  /** auto: calibrated from the warm-up's unlimited rate; null for an external proxy. */
  readonly limitsScaleMode: 'auto' | 'fixed' | null;
  /** req/s the warm-up sustained without limits (auto mode). */
  readonly calibrationRps: number | null;
  readonly baseConfig: string | null;
  readonly proxy: string;
}

/** One node's share of the run. */
export interface NodeLoad extends PlannedNode {
  readonly successTotal: number;
  readonly successPerS: number;
  readonly rateLimitSkipsTotal: number;
  readonly rateLimitSkipsPerS: number;
}

/** The proxy process's cost; null when it was not a child of the bench. */
export interface ProxyCost {
  readonly cpuMicrosPerRequest: number;
  /** CPU time / wall time: 1.0 = one core busy the whole run. */
  readonly cpuCores: number;
  readonly peakRssMiB: number;
}

/** results/<scenario>.json */
export interface LoadReport {
  readonly benchmark: 'load';
  readonly scenario: string;
  readonly description: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly parameters: LoadParameters;
  readonly throughput: {
    readonly responses: number;
    readonly ok: number;
    readonly non2xx: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly elapsedS: number;
    readonly averageRps: number;
    readonly peakRps: number;
    readonly steadyRps: number;
    readonly perSecond: readonly number[];
  };
  readonly latencyMs: LatencySummary;
  readonly curve: readonly PercentilePoint[];
  readonly nodes: readonly NodeLoad[];
  readonly tiers: ReadonlyArray<{ tier: number; successPerS: number; rpsLimit: number | null }>;
  readonly upstreamSuccessPerS: number;
  readonly proxyProcess: ProxyCost | null;
  /**
   * CPU cores used by the other processes during the run: the mocks, this bench (the load
   * generator), and whatever else ran on the machine (a busy neighbour skews every figure).
   */
  readonly otherCpuCores: {
    readonly mocks: number | null;
    readonly loadGenerator: number;
    readonly restOfMachine: number | null;
  };
}

/** Everything measured around one load run. */
export interface LoadMeasurements {
  readonly scenario: string;
  readonly description: string;
  readonly machine: MachineInfo;
  readonly parameters: LoadParameters;
  readonly run: LoadRun;
  readonly metricsBefore: Exposition;
  readonly metricsAfter: Exposition;
  /** Known nodes (from the config the bench wrote); tiers of others come from /metrics. */
  readonly planned: readonly PlannedNode[];
  readonly proxyBefore: ProcessReading | undefined;
  readonly proxyAfter: ProcessReading | undefined;
  readonly mocksCpuMicros: number | undefined;
  readonly loadGeneratorCpuMicros: number;
  /** Busy CPU time of the whole machine during the run (steal included), µs. */
  readonly machineCpuMicros: number | undefined;
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

function delta(before: Map<string, number>, after: Map<string, number>, node: string): number {
  return Math.max(0, (after.get(node) ?? 0) - (before.get(node) ?? 0));
}

/** Nodes in config order: the planned ones, then any others /metrics names (tier from its gauge). */
function nodesOf(planned: readonly PlannedNode[], metrics: Exposition): PlannedNode[] {
  const nodes = [...planned];
  for (const { labels } of samplesOf(metrics, 'rpc_node_healthy')) {
    const name = labels.node;
    if (name === undefined || nodes.some((n) => n.name === name)) continue;
    nodes.push({ name, tier: Number(labels.tier ?? 0), rpsLimit: null, delayMs: null });
  }
  return nodes;
}

function perNodeLoad(m: LoadMeasurements, elapsedS: number): NodeLoad[] {
  const success = { outcome: 'success' };
  const skip = { reason: 'rate_limit' };
  const okBefore = perNode(m.metricsBefore, 'rpc_upstream_attempts_total', success);
  const okAfter = perNode(m.metricsAfter, 'rpc_upstream_attempts_total', success);
  const skipBefore = perNode(m.metricsBefore, 'rpc_upstream_skips_total', skip);
  const skipAfter = perNode(m.metricsAfter, 'rpc_upstream_skips_total', skip);
  return nodesOf(m.planned, m.metricsAfter).map((node) => {
    const successTotal = delta(okBefore, okAfter, node.name);
    const rateLimitSkipsTotal = delta(skipBefore, skipAfter, node.name);
    return {
      ...node,
      successTotal,
      successPerS: round(successTotal / elapsedS),
      rateLimitSkipsTotal,
      rateLimitSkipsPerS: round(rateLimitSkipsTotal / elapsedS),
    };
  });
}

function proxyCost(m: LoadMeasurements, elapsedS: number): ProxyCost | null {
  if (!m.proxyBefore || !m.proxyAfter) return null;
  const cpu = m.proxyAfter.cpuMicros - m.proxyBefore.cpuMicros;
  return {
    cpuMicrosPerRequest: m.run.responses > 0 ? round(cpu / m.run.responses) : 0,
    cpuCores: round(cpu / 1e6 / elapsedS, 2),
    peakRssMiB: round(m.proxyAfter.peakRssKiB / 1024),
  };
}

function otherCores(m: LoadMeasurements, elapsedS: number): LoadReport['otherCpuCores'] {
  const cores = (micros: number) => round(micros / 1e6 / elapsedS, 2);
  const proxy =
    m.proxyBefore && m.proxyAfter ? m.proxyAfter.cpuMicros - m.proxyBefore.cpuMicros : 0;
  const ours = proxy + (m.mocksCpuMicros ?? 0) + m.loadGeneratorCpuMicros;
  return {
    mocks: m.mocksCpuMicros === undefined ? null : cores(m.mocksCpuMicros),
    loadGenerator: cores(m.loadGeneratorCpuMicros),
    restOfMachine:
      m.machineCpuMicros === undefined ? null : cores(Math.max(0, m.machineCpuMicros - ours)),
  };
}

/** Turns the measurements into the report. */
export function buildLoadReport(m: LoadMeasurements): LoadReport {
  const { run } = m;
  const elapsedS = run.elapsedS > 0 ? run.elapsedS : 1;
  const nodes = perNodeLoad(m, elapsedS);
  const tierIds = [...new Set(nodes.map((n) => n.tier))].sort((a, b) => a - b);
  const tiers = tierIds.map((tier) => {
    const members = nodes.filter((n) => n.tier === tier);
    const limited = members.every((n) => n.rpsLimit !== null);
    return {
      tier,
      successPerS: round(members.reduce((sum, n) => sum + n.successPerS, 0)),
      rpsLimit: limited ? members.reduce((sum, n) => sum + (n.rpsLimit ?? 0), 0) : null,
    };
  });
  const { peak, steady } = throughputOf(run.perSecond);
  return {
    benchmark: 'load',
    scenario: m.scenario,
    description: m.description,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    machine: m.machine,
    parameters: m.parameters,
    throughput: {
      responses: run.responses,
      ok: run.ok,
      non2xx: run.non2xx,
      errors: run.errors,
      timeouts: run.timeouts,
      elapsedS: run.elapsedS,
      averageRps: round(run.ok / elapsedS),
      peakRps: peak,
      steadyRps: steady,
      perSecond: run.perSecond,
    },
    latencyMs: run.latency.summary(),
    curve: run.latency.curve(),
    nodes,
    tiers,
    upstreamSuccessPerS: round(nodes.reduce((sum, n) => sum + n.successPerS, 0)),
    proxyProcess: proxyCost(m, elapsedS),
    otherCpuCores: otherCores(m, elapsedS),
  };
}
