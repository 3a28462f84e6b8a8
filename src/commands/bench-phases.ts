/**
 * Pieces the load benches share: a timed autocannon phase with a progress bar, CPU and memory
 * readings of the processes involved, and a /metrics scrape that degrades to a warning.
 */
import { runLoad, type LoadOptions, type LoadRun } from '../bench/load-runner.js';
import { readCpuBusy, readProcess, type ProcessReading } from '../bench/process-stats.js';
import { progressBar } from '../bench/progress-bar.js';
import { EMPTY_EXPOSITION, scrapeMetrics, type Exposition } from '../bench/prometheus-text.js';
import { redactUrl } from '../bench/redact-url.js';
import type { MockProcess } from '../mock/index.js';
import type { ProxyProcess } from './bench-processes.js';
import type { CommandIo } from './io.js';

/** GET <proxy>/metrics, or nothing (and a warning) when it cannot be read or parsed. */
export async function scrapeOrEmpty(url: string, io: CommandIo): Promise<Exposition> {
  try {
    return await scrapeMetrics(`${url.replace(/\/+$/, '')}/metrics`);
  } catch (err) {
    io.err(
      `warning: cannot read ${redactUrl(url)}/metrics (${(err as Error).message}); no per-node figures`,
    );
    return EMPTY_EXPOSITION;
  }
}

/** Runs one timed load phase with a progress bar on a terminal. */
export async function timedLoad(
  label: string,
  options: Omit<LoadOptions, 'onSecond'>,
): Promise<LoadRun> {
  const bar = progressBar(process.stderr, label, options.durationS + (options.leadInS ?? 0), ' s');
  const run = await runLoad({ ...options, onSecond: (s) => bar.update(s) });
  bar.finish();
  return run;
}

/** CPU and memory readings around a run. */
export interface Readings {
  readonly proxy: ProcessReading | undefined;
  readonly mocksCpu: number | undefined;
  readonly ownCpu: number;
  /** Busy CPU time of the whole machine (readCpuBusy), to tell how busy the rest of it was. */
  readonly machineCpu: number | undefined;
}

/** Reads the proxy's /proc entry, the mock child's and this process's CPU time. */
export async function readings(system: {
  proxy?: ProxyProcess | undefined;
  mocks?: MockProcess | undefined;
}): Promise<Readings> {
  const own = process.cpuUsage();
  return {
    proxy: system.proxy ? readProcess(system.proxy.pid) : undefined,
    mocksCpu: system.mocks ? await system.mocks.cpuMicros() : undefined,
    ownCpu: own.user + own.system,
    machineCpu: readCpuBusy(),
  };
}
