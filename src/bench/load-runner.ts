/**
 * Drives HTTP load with autocannon (keep-alive connections POSTing one JSON-RPC body) and
 * records what the client saw: a microsecond latency histogram of every response, responses
 * per wall-clock second, status classes and errors.
 */
import autocannon from 'autocannon';
import { LatencyHistogram } from './latency-histogram.js';

/** How to drive one load phase. */
export interface LoadOptions {
  readonly url: string;
  readonly body: string;
  readonly connections: number;
  readonly durationS: number;
  /** Requests per second across all connections (autocannon overallRate); undefined = flat out. */
  readonly overallRate?: number | undefined;
  /** Per-request timeout, seconds. */
  readonly timeoutS?: number;
  /** Seconds of load before the measured window opens; nothing in them is counted. */
  readonly leadInS?: number;
  /** Called as the window opens, while the load runs on (e.g. to snapshot counters). */
  readonly onMeasureStart?: () => Promise<void> | void;
  /** Called about every second with the seconds elapsed (lead-in included). */
  readonly onSecond?: (elapsedS: number) => void;
  readonly signal?: AbortSignal | undefined;
}

/** What the client saw. */
export interface LoadRun {
  /** Every response, 2xx or not. */
  readonly responses: number;
  readonly ok: number;
  readonly non2xx: number;
  /** Connection errors and timeouts (no response). */
  readonly errors: number;
  readonly timeouts: number;
  /** Length of the measured window. */
  readonly elapsedS: number;
  /** 2xx responses per whole second of the window, in order. */
  readonly perSecond: readonly number[];
  /** Latency of the 2xx responses. */
  readonly latency: LatencyHistogram;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/** Counts what the client sees once the measured window is open. */
class Recorder {
  readonly latency = new LatencyHistogram();
  readonly perSecond: number[] = [];
  readonly statusCodes: Record<string, number> = {};
  ok = 0;
  non2xx = 0;
  errors = 0;
  timeouts = 0;
  /** performance.now() when the window opened; undefined during the lead-in. */
  openedAt: number | undefined;
  startedAt = new Date().toISOString();

  open(): void {
    this.openedAt = performance.now();
    this.startedAt = new Date().toISOString();
  }

  response(statusCode: number, responseTimeMs: number): void {
    if (this.openedAt === undefined) return;
    this.statusCodes[statusCode] = (this.statusCodes[statusCode] ?? 0) + 1;
    if (statusCode < 200 || statusCode >= 300) {
      this.non2xx++;
      return;
    }
    this.ok++;
    this.latency.record(responseTimeMs);
    const second = Math.floor((performance.now() - this.openedAt) / 1000);
    this.perSecond[second] = (this.perSecond[second] ?? 0) + 1;
  }

  error(err: unknown): void {
    if (this.openedAt === undefined) return;
    this.errors++;
    if (err instanceof Error && /timed out/.test(err.message)) this.timeouts++;
  }

  result(): LoadRun {
    const elapsedMs = this.openedAt === undefined ? 0 : performance.now() - this.openedAt;
    // Only whole seconds are samples: the last, partial one would read as a dip.
    const whole = Math.min(Math.floor(elapsedMs / 1000), this.perSecond.length);
    return {
      responses: this.ok + this.non2xx,
      ok: this.ok,
      non2xx: this.non2xx,
      errors: this.errors,
      timeouts: this.timeouts,
      elapsedS: Math.round(elapsedMs) / 1000,
      perSecond: Array.from({ length: whole }, (_, i) => this.perSecond[i] ?? 0),
      latency: this.latency,
      statusCodes: this.statusCodes,
      startedAt: this.startedAt,
      finishedAt: new Date().toISOString(),
    };
  }
}

function startAutocannon(options: LoadOptions, done: (err: unknown) => void): autocannon.Instance {
  return autocannon(
    {
      url: options.url,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: options.body,
      connections: options.connections,
      duration: (options.leadInS ?? 0) + options.durationS,
      timeout: options.timeoutS ?? 10,
      ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
    },
    done,
  );
}

/**
 * Runs one load phase to its end (or until `signal` aborts it; an aborted signal runs
 * nothing). With a lead-in, the load starts `leadInS` before the measured window opens, so
 * connections, pools and token buckets are in their steady state when counting starts.
 */
export async function runLoad(options: LoadOptions): Promise<LoadRun> {
  const recorder = new Recorder();
  if (options.signal?.aborted) return recorder.result();
  const leadInMs = (options.leadInS ?? 0) * 1000;
  let opened: Promise<void> = Promise.resolve();
  const openWindow = () => {
    recorder.open();
    opened = Promise.resolve(options.onMeasureStart?.());
  };
  if (leadInMs === 0) {
    recorder.open();
    await options.onMeasureStart?.();
  }
  const start = performance.now();
  let stop = () => {};
  const done = new Promise<void>((resolve, reject) => {
    const instance = startAutocannon(options, (err: unknown) =>
      err
        ? reject(err instanceof Error ? err : new Error(`autocannon: ${JSON.stringify(err)}`))
        : resolve(),
    );
    instance.on('response', (_client, status, _bytes, ms) => recorder.response(status, ms));
    instance.on('reqError', (err: unknown) => recorder.error(err));
    stop = () => instance.stop();
  });
  options.signal?.addEventListener('abort', stop, { once: true });
  const mark = leadInMs > 0 ? setTimeout(openWindow, leadInMs) : undefined;
  const ticker = setInterval(() => options.onSecond?.((performance.now() - start) / 1000), 1000);
  try {
    await done;
    await opened;
  } finally {
    clearTimeout(mark);
    clearInterval(ticker);
    options.signal?.removeEventListener('abort', stop);
  }
  return recorder.result();
}

/** Peak and steady (median) of per-second samples; 0 when there are none. */
export function throughputOf(perSecond: readonly number[]): { peak: number; steady: number } {
  if (perSecond.length === 0) return { peak: 0, steady: 0 };
  const sorted = [...perSecond].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const steady =
    sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { peak: sorted[sorted.length - 1]!, steady };
}
