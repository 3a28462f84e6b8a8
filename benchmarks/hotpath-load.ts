/**
 * Load generators of the hot-path benchmark. Closed-loop load (fixed connections, as fast as
 * answers come) runs on wrk when it is installed — C, one thread, µs percentiles — else on
 * autocannon (through src/bench/load-runner.ts). Fixed-rate load runs on LoadClient, a small open-loop
 * client built on undici's callback API with µs HDR histograms; its closed loop stands in
 * for wrk's one-connection run when wrk is missing.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { Pool, type Dispatcher } from 'undici';
import { runLoad } from '../src/bench/load-runner.js';

/** What one load run measured; latencies in µs. */
export interface LoadResult {
  readonly tool: 'wrk' | 'autocannon' | 'open-loop' | 'closed-loop';
  readonly connections: number;
  readonly durationS: number;
  readonly requests: number;
  readonly rps: number;
  readonly p50Us: number;
  readonly p90Us: number;
  readonly p99Us: number;
  readonly maxUs: number;
  /** Non-2xx answers plus socket errors and timeouts. */
  readonly errors: number;
  /** Fixed-rate runs: the rate asked for. */
  readonly targetRate?: number;
}

/** One POST body, sent by every generator. */
export interface LoadSpec {
  readonly url: string;
  readonly body: string;
  readonly connections: number;
  readonly durationS: number;
}

/** Writes wrk's request script (POST with a JSON body) into `dir`; returns its path. */
export function writeWrkScript(dir: string, body: string): string {
  const file = path.join(dir, 'post.lua');
  const lua = [
    'wrk.method = "POST"',
    `wrk.body = ${JSON.stringify(body)}`,
    'wrk.headers["content-type"] = "application/json"',
    '',
  ].join('\n');
  writeFileSync(file, lua);
  return file;
}

const UNIT_US: Record<string, number> = { us: 1, ms: 1e3, s: 1e6, m: 6e7 };

function durationUs(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? '');
  return match ? Number(match[1]) * UNIT_US[match[2]!]! : NaN;
}

/** Reads the numbers out of `wrk --latency` output. */
export function parseWrk(output: string, spec: LoadSpec): LoadResult {
  const percentile = (p: number): number =>
    durationUs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    output,
  );
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  return {
    tool: 'wrk',
    connections: spec.connections,
    durationS: spec.durationS,
    requests,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN),
    p50Us: percentile(50),
    p90Us: percentile(90),
    p99Us: percentile(99),
    maxUs: durationUs(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(output)?.[1]),
    errors: socketErrors + non2xx,
  };
}

/** Closed-loop load with wrk (one thread; the caller's CPU affinity is inherited). */
export function runWrk(spec: LoadSpec, script: string): Promise<LoadResult> {
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${spec.durationS}s`,
    '--timeout',
    '10s',
    '--latency',
    '-s',
    script,
    spec.url,
  ];
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (spec.durationS + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      else resolve(parseWrk(stdout, spec));
    });
  });
}

/** Closed-loop load with autocannon (in this process, through runLoad of `cascade bench`). */
export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const run = await runLoad({ ...spec, timeoutS: 10 });
  const us = (percentile: number): number => run.latency.at(percentile) * 1000;
  return {
    tool: 'autocannon',
    connections: spec.connections,
    durationS: spec.durationS,
    requests: run.responses,
    rps: run.responses / spec.durationS,
    p50Us: us(50),
    p90Us: us(90),
    p99Us: us(99),
    maxUs: us(100),
    errors: run.errors + run.non2xx,
  };
}

const JSON_HEADERS = Object.freeze({ 'content-type': 'application/json' });

/** Answers of one measurement: an HDR histogram of 2xx latencies (µs) and the failures. */
class Recording {
  readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  });
  answered = 0;
  errors = 0;

  add(status: number, micros: number): void {
    if (status >= 200 && status < 300) {
      this.answered++;
      this.histogram.recordValue(Math.max(1, Math.round(micros)));
    } else {
      this.errors++;
    }
  }

  result(
    tool: LoadResult['tool'],
    connections: number,
    durationS: number,
    elapsedS: number,
  ): LoadResult {
    const h = this.histogram;
    return {
      tool,
      connections,
      durationS,
      requests: this.answered,
      rps: this.answered / elapsedS,
      p50Us: h.getValueAtPercentile(50),
      p90Us: h.getValueAtPercentile(90),
      p99Us: h.getValueAtPercentile(99),
      maxUs: h.maxValue,
      errors: this.errors,
    };
  }
}

/** Per-request timing handler for undici's callback API. */
class Timed implements Dispatcher.DispatchHandler {
  #status = 0;
  readonly #sentAt = process.hrtime.bigint();

  constructor(readonly client: LoadClient) {}

  onConnect(): void {}

  onHeaders(status: number): boolean {
    this.#status = status;
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    this.client.answered(this.#status, Number(process.hrtime.bigint() - this.#sentAt) / 1000);
  }

  onError(): void {
    this.client.answered(0, 0);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A load client on undici's callback API whose connections stay open from one measurement
 * to the next (so no measurement pays for connecting). Fixed-rate runs are open loop: a 1 ms
 * tick sends whatever the schedule says is due (about rate/1000 requests leave together),
 * answered or not. Latency is timed from each send to the last byte of its answer.
 */
export class LoadClient {
  readonly #pool: Pool;
  readonly #path: string;
  readonly #body: Buffer;
  #sent = 0;
  #done = 0;
  #recording: Recording | undefined;
  #onAnswer: (() => void) | undefined;

  constructor(
    url: string,
    body: string,
    readonly connections: number,
  ) {
    const parsed = new URL(url);
    this.#path = `${parsed.pathname}${parsed.search}`;
    this.#body = Buffer.from(body);
    this.#pool = new Pool(parsed.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 60_000,
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
  }

  #send(): void {
    this.#sent++;
    this.#pool.dispatch(
      { path: this.#path, method: 'POST', headers: JSON_HEADERS, body: this.#body },
      new Timed(this),
    );
  }

  /** Called by the handler of every request. */
  answered(status: number, micros: number): void {
    this.#done++;
    this.#recording?.add(status, micros);
    this.#onAnswer?.();
  }

  /** Waits (up to `ms`) for every request sent to be answered. */
  #drain(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(finish, ms);
      function finish(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#onAnswer = () => {
        if (this.#done >= this.#sent) finish();
      };
      this.#onAnswer();
    }).finally(() => (this.#onAnswer = undefined));
  }

  /** Open loop at `rate` requests/s for `seconds`; `record` false for a warm-up. */
  async fixedRate(rate: number, seconds: number, record = true): Promise<LoadResult> {
    const recording = new Recording();
    this.#recording = record ? recording : undefined;
    const start = performance.now();
    const first = this.#sent;
    const elapsedS = await new Promise<number>((resolve) => {
      const tick = setInterval(() => {
        const elapsed = performance.now() - start;
        if (elapsed >= seconds * 1000) {
          clearInterval(tick);
          resolve(elapsed / 1000);
          return;
        }
        const due = first + Math.floor((elapsed * rate) / 1000);
        while (this.#sent < due) this.#send();
      }, 1);
    });
    await this.#drain(5000);
    this.#recording = undefined;
    return {
      ...recording.result('open-loop', this.connections, seconds, elapsedS),
      targetRate: rate,
    };
  }

  /** Closed loop: `connections` requests in flight, each answer sends the next. */
  async closedLoop(seconds: number, record = true): Promise<LoadResult> {
    const recording = new Recording();
    this.#recording = record ? recording : undefined;
    const start = performance.now();
    const stopAt = start + seconds * 1000;
    let stopped = false;
    this.#onAnswer = () => {
      if (performance.now() < stopAt) this.#send();
      else if (this.#done >= this.#sent) stopped = true;
    };
    for (let i = 0; i < this.connections; i++) this.#send();
    while (!stopped) await sleep(5);
    this.#onAnswer = undefined;
    this.#recording = undefined;
    const elapsedS = (performance.now() - start) / 1000;
    return recording.result('closed-loop', this.connections, seconds, elapsedS);
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
