/**
 * How one node's attempts travel: HTTP(S) POSTs over a keep-alive undici Pool, driven through
 * `dispatch` with a callback handler (no promise chain, no stream object, no AbortController
 * per attempt). Lives behind the node so another transport can replace it without the router
 * knowing. Every attempt has a deadline covering connect, headers and body; failures are
 * values. A large 2xx answer whose first member is `result` is handed over as a stream
 * instead of being buffered.
 */
import { Pool, type Dispatcher } from 'undici';
import { DeadlineQueue, Expiring } from './deadline-queue.js';
import { isResultFirst } from './result-first.js';
import { UpstreamStream, type UpstreamControl } from './upstream-stream.js';

/** Largest upstream answer buffered for one attempt. */
export const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;
/** Answers larger than this may be streamed instead of buffered. */
export const STREAM_THRESHOLD = 64 * 1024;
/** Idle keep-alive connections are closed after this long. */
const KEEP_ALIVE_MS = 60_000;
/** Sockets per pool when max_concurrent does not bound them. */
const MAX_POOL_CONNECTIONS = 1024;
/** Every attempt's deadline, in one queue with one timer. */
const ATTEMPT_DEADLINES = new DeadlineQueue();
const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
});

/** What one attempt produced. */
export type AttemptResponse =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly retryAfter: string | undefined;
      readonly body: Buffer;
    }
  /** A large successful answer being relayed: the caller must pipe or abort `stream`. */
  | {
      readonly kind: 'stream';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly stream: UpstreamStream;
    }
  /** No usable response: connect/DNS/TLS failure, reset, or the deadline before headers. */
  | { readonly kind: 'transport_error'; readonly reason: string; readonly timedOut: boolean }
  /** Headers arrived but the body did not (deadline, reset, or over the size cap). */
  | { readonly kind: 'body_error'; readonly reason: string; readonly timedOut: boolean };

/** Receives an attempt's response, with the caller's token (so it need not be a closure). */
export type AttemptCallback<T> = (response: AttemptResponse, token: T) => void;

/** Extra request headers copied from the client (already lower-case). */
export type ForwardHeaders = Record<string, string> | undefined;

const CONTENT_TYPE = Buffer.from('content-type', 'latin1');
const RETRY_AFTER = Buffer.from('retry-after', 'latin1');

/** True when `name` equals the lower-case ASCII `expected`, ignoring case. */
function isHeader(name: Buffer, expected: Buffer): boolean {
  if (name.length !== expected.length) return false;
  for (let i = 0; i < name.length; i++) {
    // ORing 0x20 lower-cases ASCII letters; `expected` holds only letters and '-'.
    if ((name[i]! | 0x20) !== expected[i]) return false;
  }
  return true;
}

/**
 * The first value of a header in undici's raw list (name, value, name, value…). Reading the
 * two headers we need straight from the bytes skips building a header object per answer.
 */
function rawHeader(raw: readonly Buffer[] | undefined, name: Buffer): string | undefined {
  if (raw === undefined) return undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (isHeader(raw[i]!, name)) return raw[i + 1]!.toString('latin1');
  }
  return undefined;
}

function describe(err: Error): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code ?? e.message;
}

/**
 * One attempt's handler: collects the answer, enforces the deadline, settles exactly once.
 * It speaks undici's raw callback interface (status + raw header list, boolean backpressure)
 * rather than the controller interface, which undici adapts to this one by wrapping every
 * handler and parsing every header into an object — about 1 µs per attempt we do not need.
 */
class AttemptHandler<T> extends Expiring implements Dispatcher.DispatchHandler, UpstreamControl {
  #abort: ((reason?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #paused = false;
  #settled = false;
  #timedOut = false;
  #status = 0;
  #headers: Buffer[] | undefined;
  #chunks: Buffer[] = [];
  #size = 0;
  #stream: UpstreamStream | undefined;
  /** Whether the stream-or-buffer decision was taken (it is taken once). */
  #decided = false;

  constructor(
    private readonly done: AttemptCallback<T>,
    private readonly token: T,
    private readonly timeoutMs: number,
    private readonly allowStream: boolean,
  ) {
    super();
    ATTEMPT_DEADLINES.add(this, timeoutMs);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
    if (this.#settled) abort(new Error('attempt already given up'));
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.#status = status;
    this.#headers = rawHeaders;
    this.#resume = resume;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#stream) {
      this.#stream.push(chunk);
      return !this.#paused;
    }
    if (this.#settled) return true;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#size > MAX_RESPONSE_BYTES) {
      this.abort(new Error('answer larger than 512 MiB'));
    } else if (!this.#decided && this.#size >= STREAM_THRESHOLD) {
      // Decide once: re-checking every later chunk would copy the body again each time.
      this.#decided = true;
      if (!this.allowStream || this.#status < 200 || this.#status >= 300) return true;
      const head = this.#body();
      if (isResultFirst(head)) this.#startStream(head);
    }
    return !this.#paused;
  }

  onComplete(): void {
    if (this.#stream) return this.#stream.end();
    this.#settle({
      kind: 'answer',
      status: this.#status,
      contentType: rawHeader(this.#headers, CONTENT_TYPE),
      // Only a 429 or 503 can ask for a pause (see retryAfterSeconds); skip the scan otherwise.
      retryAfter:
        this.#status === 429 || this.#status === 503
          ? rawHeader(this.#headers, RETRY_AFTER)
          : undefined,
      body: this.#body(),
    });
  }

  onError(error: Error): void {
    if (this.#stream) return this.#stream.fail(error);
    const reason = this.#timedOut ? `no answer within ${this.timeoutMs} ms` : describe(error);
    const timedOut = this.#timedOut;
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut }
        : { kind: 'transport_error', reason, timedOut },
    );
  }

  // UpstreamControl, for a streamed answer.
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#resume?.();
  }

  abort(reason: Error): void {
    this.#abort?.(reason);
  }

  #body(): Buffer {
    if (this.#chunks.length === 1) return this.#chunks[0]!;
    const body = Buffer.concat(this.#chunks, this.#size);
    this.#chunks = [body];
    return body;
  }

  #startStream(head: Buffer): void {
    this.#stream = new UpstreamStream(this, head);
    this.#chunks = [];
    this.#settle({
      kind: 'stream',
      status: this.#status,
      contentType: rawHeader(this.#headers, CONTENT_TYPE),
      stream: this.#stream,
    });
  }

  /** The attempt's deadline passed (called by the deadline queue). */
  expire(): void {
    if (this.#settled) return;
    this.#timedOut = true;
    const reason = `no answer within ${this.timeoutMs} ms`;
    // Settle now even if the request is still queued for a socket; onConnect aborts it then.
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut: true }
        : { kind: 'transport_error', reason, timedOut: true },
    );
    this.#abort?.(new Error(reason));
  }

  #settle(response: AttemptResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    ATTEMPT_DEADLINES.remove(this);
    this.done(response, this.token);
  }
}

/** A pooled HTTP client for one upstream URL. */
export class HttpTransport {
  readonly #pool: Pool;
  readonly #path: string;

  /** `url` carries secrets (path, query): it is never logged from here. */
  constructor(url: string, maxConcurrent: number) {
    const parsed = new URL(url);
    this.#path = `${parsed.pathname}${parsed.search}`;
    const connections = Number.isFinite(maxConcurrent)
      ? Math.max(1, Math.min(maxConcurrent, MAX_POOL_CONNECTIONS))
      : MAX_POOL_CONNECTIONS;
    this.#pool = new Pool(parsed.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /**
   * POSTs `body` and reads the answer, giving up after `timeoutMs`; `done(response, token)` is
   * called exactly once. With `allowStream`, a large successful answer comes back as a stream
   * the caller must pipe or abort. Callback-based: an attempt costs no promise.
   */
  send<T>(
    body: Buffer,
    timeoutMs: number,
    extraHeaders: ForwardHeaders,
    allowStream: boolean,
    done: AttemptCallback<T>,
    token: T,
  ): void {
    const handler = new AttemptHandler(done, token, timeoutMs, allowStream);
    const headers = extraHeaders ? { ...extraHeaders, ...JSON_HEADERS } : JSON_HEADERS;
    this.#pool.dispatch({ path: this.#path, method: 'POST', headers, body }, handler);
  }

  /** Closes idle connections; in-flight requests finish first. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** Drops every connection now. */
  async destroy(): Promise<void> {
    await this.#pool.destroy();
  }
}
