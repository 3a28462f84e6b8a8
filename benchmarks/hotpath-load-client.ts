/**
 * LoadClient: the hot-path benchmark's own load generator on undici's callback API, for
 * fixed-rate (open-loop) load, and closed-loop load with connections kept from one
 * measurement to the next. Latencies go into µs HDR histograms.
 */
import * as hdr from 'hdr-histogram-js';
import { Pool, type Dispatcher } from 'undici';
import type { LoadResult } from './hotpath-load.js';

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
