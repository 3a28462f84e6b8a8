/**
 * `cascade bench overhead`: warm vs warm. One mock node (forked child) and `cascade serve` in
 * front of it (child); the same fixed-rate keep-alive load goes straight to the node, then
 * through the proxy, and the latency difference is what cascade adds.
 */
import path from 'node:path';
import type { ProxyCost } from '../bench/load-report.js';
import { describeMachine } from '../bench/machine.js';
import {
  buildOverheadReport,
  overheadPath,
  overheadResultFiles,
  type OverheadReport,
} from '../bench/overhead.js';
import { resultJson, writeResultFiles } from '../bench/result-files.js';
import { startMockProcess } from '../mock/index.js';
import {
  displayPath,
  jsonBody,
  positiveNumber,
  wholeNumber,
  withInterrupt,
} from './bench-flags.js';
import { readings, timedLoad, type Readings } from './bench-phases.js';
import { PACKAGE_ROOT, benchConfigToml, startProxyProcess } from './bench-processes.js';
import { renderOverheadTable } from './bench-render.js';
import type { CommandIo, ExitCode } from './io.js';

/** Flags of `cascade bench overhead`. */
export interface BenchOverheadOptions {
  readonly rate?: string | undefined;
  readonly duration?: string | undefined;
  readonly warmup?: string | undefined;
  readonly connections?: string | undefined;
  readonly delay?: string | undefined;
  readonly body?: string | undefined;
  readonly out?: string | undefined;
  readonly json?: boolean | undefined;
}

function cost(
  before: Readings,
  after: Readings,
  requests: number,
  elapsedS: number,
): ProxyCost | null {
  if (!before.proxy || !after.proxy) return null;
  const cpu = after.proxy.cpuMicros - before.proxy.cpuMicros;
  return {
    cpuMicrosPerRequest: requests > 0 ? Math.round((cpu / requests) * 10) / 10 : 0,
    cpuCores: Math.round((cpu / 1e6 / Math.max(elapsedS, 0.001)) * 100) / 100,
    peakRssMiB: Math.round((after.proxy.peakRssKiB / 1024) * 10) / 10,
  };
}

/** `cascade bench overhead`. */
export async function runBenchOverhead(
  options: BenchOverheadOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const rate = wholeNumber('--rate', options.rate, 2000);
  const durationS = positiveNumber('--duration', options.duration, 10);
  const warmupS = positiveNumber('--warmup', options.warmup, 2, true);
  const connections = Math.min(rate, wholeNumber('--connections', options.connections, 10));
  const delayMs = positiveNumber('--delay', options.delay, 0, true);
  const body = jsonBody(options.body);
  const outDir = path.resolve(io.cwd, options.out ?? 'results');
  const startedAt = new Date().toISOString();
  const mocks = await startMockProcess([{ name: 'upstream', delayMs }]);
  let report: OverheadReport | undefined;
  try {
    const proxy = await startProxyProcess(
      benchConfigToml([
        {
          name: 'upstream',
          url: mocks.nodes[0]!.url,
          tier: 0,
          rpsLimit: Infinity,
          maxConcurrent: Infinity,
          pricingPath: path.join(PACKAGE_ROOT, 'config/provider_config/public.toml'),
        },
      ]),
    );
    try {
      report = await withInterrupt(async (signal) => {
        const directUrl = mocks.nodes[0]!.url;
        const load = { body, connections, overallRate: rate, signal };
        if (warmupS > 0) {
          await timedLoad('warm-up', { ...load, url: directUrl, durationS: warmupS });
          await timedLoad('warm-up', { ...load, url: proxy.url, durationS: warmupS });
        }
        const direct = await timedLoad('direct', { ...load, url: directUrl, durationS });
        const before = await readings({ proxy });
        const viaProxy = await timedLoad('via cascade', { ...load, url: proxy.url, durationS });
        const after = await readings({ proxy });
        if (signal.aborted) return undefined;
        return buildOverheadReport(
          describeMachine(),
          { rate, durationS, warmupS, connections, body, upstreamDelayMs: delayMs },
          overheadPath(directUrl, direct),
          overheadPath(proxy.url, viaProxy),
          cost(before, after, viaProxy.responses, viaProxy.elapsedS),
          startedAt,
        );
      });
    } finally {
      await proxy.close();
    }
  } finally {
    await mocks.close();
  }
  if (!report) {
    io.err('interrupted: no result files written');
    return 1;
  }
  const files = writeResultFiles(outDir, overheadResultFiles(report));
  io.out(
    options.json
      ? resultJson(report)
      : renderOverheadTable(
          report,
          files.map((f) => displayPath(f, io.cwd)),
        ),
  );
  return report.direct.ok > 0 && report.proxy.ok > 0 ? 0 : 1;
}
