/**
 * The naive client of the TLS-amortization bench: every request opens its own connection
 * (and, over https, does a full TLS handshake — no agent, no session reuse), like
 * `oha --disable-keepalive`. Connection setup is measured per request from the socket's
 * events: `lookup` (DNS), `connect` (TCP), `secureConnect` (TLS).
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';

/** What one request did; times in ms from the moment it was issued. */
export interface NaiveSample {
  /** When the request was issued, ms after the run started. */
  readonly startMs: number;
  /** Issue → last body byte. */
  readonly latencyMs: number;
  /** Issue → connection ready for the request (TCP connected, TLS done). */
  readonly setupMs: number;
  /** DNS lookup; 0 for an IP literal. */
  readonly dnsMs: number;
  /** TCP connect after the lookup. */
  readonly tcpMs: number;
  /** TLS handshake after TCP; 0 over plain http. */
  readonly tlsMs: number;
  /** Connection ready → response headers. */
  readonly waitMs: number;
  readonly status: number;
  readonly bytes: number;
  /** HTTP 2xx with a JSON-RPC `result` (or a batch array). */
  readonly ok: boolean;
  /** Set when there was no response (connect/TLS failure, reset, timeout). */
  readonly error?: string;
}

/** How to run the naive client. */
export interface NaiveClientOptions {
  readonly url: string;
  readonly body: string;
  readonly requests: number;
  readonly concurrency: number;
  /** Requests per second across all workers; undefined = as fast as they complete. */
  readonly qps?: number | undefined;
  /** Extra CA (PEM) to trust, e.g. a mock node's self-signed certificate. */
  readonly ca?: string | undefined;
  /** Per-request deadline. */
  readonly timeoutMs: number;
  /** Called after every request with the number done so far. */
  readonly onProgress?: (done: number) => void;
  readonly signal?: AbortSignal | undefined;
}

/** A finished run. */
export interface NaiveRun {
  readonly samples: readonly NaiveSample[];
  readonly elapsedMs: number;
  readonly startedAt: string;
  readonly finishedAt: string;
}

interface Marks {
  lookup?: number;
  connect?: number;
  secure?: number;
  headers?: number;
}

function isJsonRpcSuccess(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (Array.isArray(parsed)) return true;
    return typeof parsed === 'object' && parsed !== null && 'result' in parsed;
  } catch {
    return false;
  }
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}

function sampleOf(
  issued: number,
  runStart: number,
  marks: Marks,
  end: number,
  result: { status: number; bytes: number; ok: boolean; error?: string },
): NaiveSample {
  const since = (t: number | undefined, from: number) => (t === undefined ? 0 : t - from);
  const afterLookup = marks.lookup ?? issued;
  const ready = marks.secure ?? marks.connect;
  return {
    startMs: issued - runStart,
    latencyMs: end - issued,
    setupMs: since(ready, issued),
    dnsMs: since(marks.lookup, issued),
    tcpMs: since(marks.connect, afterLookup),
    tlsMs:
      marks.secure === undefined || marks.connect === undefined ? 0 : marks.secure - marks.connect,
    waitMs: marks.headers === undefined || ready === undefined ? 0 : marks.headers - ready,
    ...result,
  };
}

/** Sends one request on a brand-new connection and measures it. */
export function sendOnNewConnection(
  options: NaiveClientOptions,
  runStart: number,
): Promise<NaiveSample> {
  const target = new URL(options.url);
  const secure = target.protocol === 'https:';
  const payload = Buffer.from(options.body);
  const marks: Marks = {};
  const issued = performance.now();
  return new Promise((resolve) => {
    const finish = (result: { status: number; bytes: number; ok: boolean; error?: string }) =>
      resolve(sampleOf(issued, runStart, marks, performance.now(), result));
    const request = (secure ? https : http).request(target, {
      method: 'POST',
      agent: false,
      ...(secure && options.ca ? { ca: options.ca } : {}),
      headers: { 'content-type': 'application/json', 'content-length': payload.length },
    });
    request.on('socket', (socket: Socket) => {
      socket.once('lookup', () => (marks.lookup = performance.now()));
      socket.once('connect', () => (marks.connect = performance.now()));
      socket.once('secureConnect', () => (marks.secure = performance.now()));
    });
    request.setTimeout(options.timeoutMs, () =>
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
    );
    request.on('error', (err) => finish({ status: 0, bytes: 0, ok: false, error: describe(err) }));
    request.on('response', (response) => {
      marks.headers = performance.now();
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (err) =>
        finish({ status: response.statusCode ?? 0, bytes: 0, ok: false, error: describe(err) }),
      );
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300 && isJsonRpcSuccess(body.toString());
        finish({ status, bytes: body.length, ok });
      });
    });
    request.end(payload);
  });
}

function waitUntil(at: number, signal: AbortSignal | undefined): Promise<void> {
  const ms = at - performance.now();
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Runs `requests` requests, `concurrency` at a time, each on a new connection; with `qps`,
 * request i is not issued before start + i/qps. Stops early (with what it has) on `signal`.
 */
export async function runNaiveClient(options: NaiveClientOptions): Promise<NaiveRun> {
  const samples: NaiveSample[] = [];
  const startedAt = new Date().toISOString();
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < options.requests && !options.signal?.aborted) {
      const index = next++;
      if (options.qps !== undefined)
        await waitUntil(start + (index * 1000) / options.qps, options.signal);
      if (options.signal?.aborted) return;
      samples.push(await sendOnNewConnection(options, start));
      options.onProgress?.(samples.length);
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency, options.requests));
  await Promise.all(Array.from({ length: workers }, worker));
  return {
    samples,
    elapsedMs: performance.now() - start,
    startedAt,
    finishedAt: new Date().toISOString(),
  };
}
