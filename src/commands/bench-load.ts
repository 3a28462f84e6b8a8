/**
 * `cascade bench load` (CascadeRPC's Run 1 / Run 2). Mock nodes run in a forked child, the
 * proxy as `cascade serve` in another, and autocannon drives load from this process; /metrics
 * and /proc are read before and after. By default the rps limits are fitted to the machine:
 * the proxy starts unlimited, a calibration measures what the box sustains, and the scaled
 * limits are applied with SIGHUP (see bench/limits-scale.ts).
 */
import path from 'node:path';
import { ConfigError, formatProblem, loadConfig, type NodeConfig } from '../core/index.js';
import { autoLimitsScale, scaleLimit } from '../bench/limits-scale.js';
import { describeMachine } from '../bench/machine.js';
import { throughputOf, type LoadOptions } from '../bench/load-runner.js';
import { buildLoadReport, type LoadReport, type PlannedNode } from '../bench/load-report.js';
import { loadResultFiles } from '../bench/load-files.js';
import { redactUrl } from '../bench/redact-url.js';
import { EMPTY_EXPOSITION } from '../bench/prometheus-text.js';
import { resultJson, writeResultFiles } from '../bench/result-files.js';
import { startMockProcess, type MockProcess } from '../mock/index.js';
import { displayPath, withInterrupt } from './bench-flags.js';
import {
  PACKAGE_ROOT,
  benchConfigToml,
  startProxyProcess,
  type ProxyProcess,
} from './bench-processes.js';
import { readings, scrapeOrEmpty, timedLoad, type Readings } from './bench-phases.js';
import { renderLoadTables } from './bench-render.js';
import {
  SCENARIOS,
  planLoad,
  type BenchLoadOptions,
  type LoadPlan,
  type Scenario,
} from './bench-load-plan.js';
import type { CommandIo, ExitCode } from './io.js';

/**
 * Load before the measured window opens, in the same run: pools and connections are warm and
 * the token buckets spent (a bucket refilled during a pause would read as req/s over the cap).
 */
const LEAD_IN_S = 1;
/** Unlimited load measured to pick the auto scale. */
const CALIBRATE_S = 2;
const BASE_CONFIG = 'config/balancer_config/mock_nodes.toml';

function baseNodes(
  configPath: string | undefined,
  io: CommandIo,
): { nodes: readonly NodeConfig[]; path: string } {
  const result = configPath
    ? loadConfig({ configPath, env: io.env, cwd: io.cwd })
    : loadConfig({
        configPath: path.join(PACKAGE_ROOT, BASE_CONFIG),
        env: io.env,
        cwd: PACKAGE_ROOT,
      });
  if (!result.config) {
    for (const problem of result.errors) io.err(`error: ${formatProblem(problem)}`);
    throw new ConfigError(
      `${result.path}: ${result.errors.length} problem(s) in the config`,
      result.errors.map(formatProblem),
    );
  }
  return { nodes: result.config.nodes, path: configPath ?? BASE_CONFIG };
}

/** What the proxy under test is, and how to read it. */
interface System {
  readonly proxyUrl: string;
  readonly proxy: ProxyProcess | undefined;
  readonly mocks: MockProcess | undefined;
  /** The config at `scale` (null: no rps limits). */
  readonly configAt: (scale: number | null) => string;
  readonly plannedAt: (scale: number | null) => PlannedNode[];
}

async function startSystem(
  scenario: Scenario,
  scale: number | null,
  nodes: readonly NodeConfig[],
): Promise<System> {
  const delays: readonly number[] = SCENARIOS[scenario].delays;
  const mocks = await startMockProcess(
    nodes.map((n, i) => ({ name: n.name, delayMs: delays[i] ?? 0 })),
  );
  const configAt = (at: number | null) =>
    benchConfigToml(
      nodes.map((n, i) => ({
        name: n.name,
        url: mocks.nodes[i]!.url,
        tier: n.tier,
        rpsLimit: scaleLimit(n.rpsLimit, at),
        maxConcurrent: n.maxConcurrent,
        pricingPath: n.pricing.path,
      })),
    );
  const plannedAt = (at: number | null) =>
    nodes.map((n, i) => {
      const limit = scaleLimit(n.rpsLimit, at);
      return {
        name: n.name,
        tier: n.tier,
        rpsLimit: Number.isFinite(limit) ? limit : null,
        delayMs: delays[i] ?? 0,
      };
    });
  try {
    const proxy = await startProxyProcess(configAt(scale));
    return { proxyUrl: proxy.url, proxy, mocks, configAt, plannedAt };
  } catch (err) {
    await mocks.close();
    throw err;
  }
}

/**
 * Warm-up; in auto mode then the calibration: the proxy starts without rps limits, CALIBRATE_S
 * of load measure what it sustains, and the scaled limits are applied by SIGHUP. Returns the
 * scale in force and the calibration rate (null when fixed).
 */
async function warmUp(
  plan: LoadPlan,
  system: System,
  nodes: readonly NodeConfig[],
  load: Omit<LoadOptions, 'durationS'>,
): Promise<{ scale: number | null; calibrationRps: number | null }> {
  const fixed = plan.limits === 'auto' ? null : plan.limits;
  if (plan.limits !== 'auto' || !system.proxy) {
    if (plan.warmupS > 0) await timedLoad('warm-up', { ...load, durationS: plan.warmupS });
    return { scale: plan.external ? null : fixed, calibrationRps: null };
  }
  // First warm the JIT and the pools, then measure what the box sustains without limits.
  if (plan.warmupS > 0) await timedLoad('warm-up', { ...load, durationS: plan.warmupS });
  const calibration = await timedLoad('calibrate', { ...load, durationS: CALIBRATE_S });
  const sustained =
    calibration.perSecond.length >= 2
      ? throughputOf(calibration.perSecond).steady
      : calibration.ok / calibration.elapsedS;
  const scale = autoLimitsScale(sustained, nodes);
  if (load.signal?.aborted) return { scale, calibrationRps: null };
  await system.proxy.reload(system.configAt(scale));
  return { scale, calibrationRps: Math.round(sustained) };
}

/** Warm-up (and calibration), then the measured run between two scrapes and readings. */
async function measure(
  plan: LoadPlan,
  system: System,
  base: { nodes: readonly NodeConfig[]; path: string } | undefined,
  io: CommandIo,
  signal: AbortSignal,
): Promise<LoadReport | undefined> {
  const load = { url: system.proxyUrl, body: plan.body, connections: plan.connections, signal };
  const { scale, calibrationRps } = await warmUp(plan, system, base?.nodes ?? [], load);
  let metricsBefore = EMPTY_EXPOSITION;
  let before: Readings | undefined;
  const run = await timedLoad(plan.scenario, {
    ...load,
    durationS: plan.durationS,
    leadInS: LEAD_IN_S,
    // Snapshot the counters as the window opens, while the load runs on.
    onMeasureStart: async () => {
      [metricsBefore, before] = await Promise.all([
        scrapeOrEmpty(system.proxyUrl, io),
        readings(system),
      ]);
    },
  });
  const after = await readings(system);
  const metricsAfter = await scrapeOrEmpty(system.proxyUrl, io);
  if (signal.aborted || !before) return undefined;
  return buildLoadReport({
    scenario: plan.scenario,
    description: SCENARIOS[plan.scenario].description,
    machine: describeMachine(),
    parameters: {
      durationS: plan.durationS,
      warmupS: plan.warmupS,
      leadInS: LEAD_IN_S,
      connections: plan.connections,
      body: plan.body,
      limitsScale: scale,
      limitsScaleMode: plan.external ? null : plan.limits === 'auto' ? 'auto' : 'fixed',
      calibrationRps,
      baseConfig: base?.path ?? null,
      proxy: plan.external ? redactUrl(plan.external) : 'cascade serve (child process)',
    },
    run,
    metricsBefore,
    metricsAfter,
    planned: system.plannedAt(scale),
    proxyBefore: before.proxy,
    proxyAfter: after.proxy,
    mocksCpuMicros: before.mocksCpu === undefined ? undefined : after.mocksCpu! - before.mocksCpu,
    loadGeneratorCpuMicros: after.ownCpu - before.ownCpu,
    machineCpuMicros:
      before.machineCpu === undefined || after.machineCpu === undefined
        ? undefined
        : after.machineCpu - before.machineCpu,
  });
}

/** `cascade bench load`. */
export async function runBenchLoad(options: BenchLoadOptions, io: CommandIo): Promise<ExitCode> {
  const plan = planLoad(options, io);
  const base = plan.external ? undefined : baseNodes(options.config, io);
  const system: System = plan.external
    ? {
        proxyUrl: plan.external,
        proxy: undefined,
        mocks: undefined,
        configAt: () => '',
        plannedAt: () => [],
      }
    : await startSystem(plan.scenario, plan.limits === 'auto' ? null : plan.limits, base!.nodes);
  let report: LoadReport | undefined;
  try {
    report = await withInterrupt((signal) => measure(plan, system, base, io, signal));
  } finally {
    await system.proxy?.close();
    await system.mocks?.close();
  }
  if (!report) {
    io.err('interrupted: no result files written');
    return 1;
  }
  const files = writeResultFiles(plan.outDir, loadResultFiles(report));
  io.out(
    options.json
      ? resultJson(report)
      : renderLoadTables(
          report,
          files.map((f) => displayPath(f, io.cwd)),
        ),
  );
  return report.throughput.ok > 0 ? 0 : 1;
}
