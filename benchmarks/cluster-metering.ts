/**
 * What the parts of the cluster benchmark share: the request they send, starting the variants
 * they compare, and CPU accounting around a window (each proxy, the mocks, the whole machine).
 */
import os from 'node:os';
import path from 'node:path';
import { readCpuBusy } from '../src/bench/process-stats.js';
import type { MockProcess } from '../src/mock/index.js';
import { runSeconds, startVariant, type BenchCascade, type Variant } from './cluster-harness.js';

const REPO_ROOT = path.resolve('.');
export const BODY =
  '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `cascade serve` for each of `variants` in turn, in front of the mock nodes. */
export async function startVariants(
  dir: string,
  mocks: MockProcess,
  variants: readonly Variant[],
): Promise<BenchCascade[]> {
  const started: BenchCascade[] = [];
  for (const variant of variants) {
    const urls = mocks.nodes.map((node) => node.url);
    started.push(await startVariant(dir, REPO_ROOT, urls, variant));
  }
  return started;
}

/** Busy CPU seconds of the whole machine (every core), from /proc/stat. */
function machineBusy(): number {
  let total = 0;
  for (let cpu = 0; cpu < os.availableParallelism(); cpu++)
    total += (readCpuBusy(cpu) ?? NaN) / 1e6;
  return total;
}

/** What one window measured: CPU seconds of each proxy, of the mocks, of the machine; wall. */
export interface Metered<T> {
  readonly result: T;
  readonly proxyCpu: readonly number[];
  readonly mocksCpu: number;
  readonly machineCpu: number;
  readonly wall: number;
}

/** CPU seconds of `proxies` (each), of the mocks and of the machine over `run`. */
export async function metered<T>(
  proxies: readonly BenchCascade[],
  mocks: MockProcess,
  run: () => Promise<T>,
): Promise<Metered<T>> {
  const cpu = () => proxies.map((p) => p.cpuSeconds());
  const before = { proxies: cpu(), mocks: runSeconds(mocks.pid), machine: machineBusy() };
  const start = performance.now();
  const result = await run();
  // The proxy's last writes may be accounted a moment after the client has its answers.
  await sleep(20);
  const after = cpu();
  return {
    result,
    proxyCpu: after.map((seconds, i) => seconds - before.proxies[i]!),
    mocksCpu: runSeconds(mocks.pid) - before.mocks,
    machineCpu: machineBusy() - before.machine,
    wall: (performance.now() - start) / 1000,
  };
}
