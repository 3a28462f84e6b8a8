/**
 * The workers part of the cluster benchmark: `cascade serve --workers 2` vs one process, closed
 * loop (wrk), alternating window by window: req/s, latency, and the proxy's CPU per request.
 */
import type { MockProcess } from '../src/mock/index.js';
import { BODY, metered, startVariants } from './cluster-metering.js';
import type { WorkersWindow } from './cluster-report.js';
import { runWrk, writeWrkScript } from './hotpath-wrk.js';

/** Connections of each wrk run. */
export const CONNECTIONS = 50;

/** Runs the workers part: `rounds` windows of `seconds` per variant, taking turns. */
export async function workersPart(
  dir: string,
  mocks: MockProcess,
  seconds: number,
  rounds: number,
): Promise<WorkersWindow[]> {
  const script = writeWrkScript(dir, BODY);
  const variants = await startVariants(dir, mocks, [
    { name: 'workers-1', workers: 1 },
    { name: 'workers-2', workers: 2 },
  ]);
  const windows: WorkersWindow[] = [];
  try {
    // Warm-up: the JIT compiles the hot path in the first seconds of traffic.
    for (const proxy of variants) {
      await runWrk({ url: proxy.url, body: BODY, connections: CONNECTIONS, durationS: 2 }, script);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const proxy of variants) {
        const spec = { url: proxy.url, body: BODY, connections: CONNECTIONS, durationS: seconds };
        const m = await metered([proxy], mocks, () => runWrk(spec, script));
        const load = m.result;
        windows.push({
          variant: proxy.variant.name,
          round,
          rps: load.rps,
          p50Us: load.p50Us,
          p99Us: load.p99Us,
          errors: load.errors,
          proxyCpuUsPerRequest: (m.proxyCpu[0]! * 1e6) / load.requests,
          proxyCores: m.proxyCpu[0]! / m.wall,
          mocksCores: m.mocksCpu / m.wall,
          machineCores: m.machineCpu / m.wall,
        });
        process.stdout.write(
          `workers: ${proxy.variant.name} round ${round}: ${Math.round(load.rps)} req/s\n`,
        );
      }
    }
  } finally {
    await Promise.all(variants.map((v) => v.stop()));
  }
  return windows;
}
