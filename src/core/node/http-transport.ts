/**
 * How one node's attempts travel: HTTP(S) POSTs over a keep-alive undici Pool, driven through
 * `dispatch` with a callback handler (no promise chain, no stream object, no AbortController
 * per attempt). Lives behind the node so another transport can replace it without the router
 * knowing. Every attempt has a deadline covering connect, headers and body; failures are
 * values. A large 2xx answer whose first member is `result` is handed over as a stream
 * instead of being buffered.
 */
import { Client, Pool, type Dispatcher } from 'undici';
import type { DeadlineQueue } from './deadline-queue.js';
import { Expiring } from './deadline-queue.js';
import { isResultFirst } from './result-first.js';
import { UpstreamStream, type UpstreamControl } from './upstream-stream.js';

/** Largest upstream answer buffered for one attempt. */
export const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;
/** Answers larger than this may be streamed instead of buffered. */
export const STREAM_THRESHOLD = 64 * 1024;

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
  | {
      readonly kind: 'transport_error';
      readonly reason: string;
      readonly timedOut: boolean;
      /** False when the request was never written to a connection (the node never saw it). */
      readonly sent: boolean;
    }
  /** Headers arrived but the body did not (deadline, reset, or over the size cap). */
  | { readonly kind: 'body_error'; readonly reason: string; readonly timedOut: boolean };

/** A sent attempt's handle: cancelling settles it at once and aborts the request. */
export interface AttemptControl {
  /** Gives the attempt up (a hedge race was decided); a no-op once it settled. */
  cancel(): void;
}

/** How a node's connections are kept. */
export interface TransportOptions {
  /** Most connections open at once (the node's in-flight cap keeps requests from queueing). */
  readonly maxConnections: number;
  /** An idle pooled connection is not reused after this long (upstreams may have closed it). */
  readonly keepAliveMs: number;
  /** Where attempts' deadlines wait (one queue and one timer per server). */
  readonly deadlines: DeadlineQueue;
  /** The node's configured headers (lower-case names; secret values). */
  readonly headers: Readonly<Record<string, string>>;
}

/** Connection failures that can mean "the upstream closed this idle connection as we sent". */
const DROPPED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

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

/**
 * The headers every request to a node carries, built once: the configured ones, HTTP Basic
 * credentials from the URL's user:password (percent-decoded, as browsers and viem do), and
 * the content type. Secrets: never logged.
 */
export function nodeRequestHeaders(
  url: URL,
  configured: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { ...configured };
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }
  headers['content-type'] = 'application/json';
  return Object.freeze(headers);
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
class AttemptHandler<T>
  extends Expiring
  implements Dispatcher.DispatchHandler, UpstreamControl, AttemptControl
{
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
  /** Set once the attempt was resent on a fresh connection (it is resent at most once). */
  #resent = false;
  /** Set once the request was handed to a connection to be written. */
  #sent = false;

  constructor(
    private readonly transport: HttpTransport,
    private readonly request: Dispatcher.DispatchOptions,
    private readonly done: AttemptCallback<T>,
    private readonly token: T,
    private readonly timeoutMs: number,
    private readonly allowStream: boolean,
    /** The transport had answered before: the pool may hand this attempt a reused connection. */
    private readonly mayReuse: boolean,
  ) {
    super();
    transport.deadlines.add(this, timeoutMs);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
    // undici calls this just before it writes the request: aborting here means never sent.
    if (this.#settled) abort(new Error('attempt already given up'));
    else this.#sent = true;
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
    if (this.#isStaleConnection(error)) {
      // The upstream closed an idle pooled connection as we sent on it: not the node's fault,
      // and nothing of an answer arrived, so the request is sent again on a new connection.
      this.#resent = true;
      this.#abort = undefined;
      this.transport.sendFresh(this.request, this);
      return;
    }
    const reason = this.#timedOut ? `no answer within ${this.timeoutMs} ms` : describe(error);
    const timedOut = this.#timedOut;
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut }
        : { kind: 'transport_error', reason, timedOut, sent: this.#sent },
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

  #isStaleConnection(error: Error): boolean {
    if (this.#resent || !this.mayReuse || this.#settled || this.#headers !== undefined)
      return false;
    const code = (error as { code?: string }).code;
    return code !== undefined && DROPPED.has(code);
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

  cancel(): void {
    if (this.#settled) return;
    const reason = 'cancelled';
    this.#settle({ kind: 'transport_error', reason, timedOut: false, sent: this.#sent });
    this.#abort?.(new Error(reason));
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
        : { kind: 'transport_error', reason, timedOut: true, sent: this.#sent },
    );
    this.#abort?.(new Error(reason));
  }

  #settle(response: AttemptResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    this.transport.deadlines.remove(this);
    if (response.kind === 'answer' || response.kind === 'stream') this.transport.answered = true;
    this.done(response, this.token);
  }
}

/** A pooled HTTP client for one upstream URL. */
export class HttpTransport {
  readonly #pool: Pool;
  readonly #origin: string;
  readonly #path: string;
  /** Sent with every request: built once, so an attempt adds nothing but client headers. */
  readonly #headers: Readonly<Record<string, string>>;
  readonly #options: TransportOptions;
  readonly deadlines: DeadlineQueue;
  /** An answer has come back: later attempts may run on reused connections. */
  answered = false;

  /** `url` carries secrets (credentials, path, query): it is never logged from here. */
  constructor(url: string, options: TransportOptions) {
    const parsed = new URL(url);
    this.#origin = parsed.origin;
    this.#path = `${parsed.pathname}${parsed.search}`;
    this.#headers = nodeRequestHeaders(parsed, options.headers);
    this.#options = options;
    this.deadlines = options.deadlines;
    this.#pool = new Pool(parsed.origin, {
      connections: Math.max(1, options.maxConnections),
      pipelining: 1,
      // Applies when the upstream gives no Keep-Alive hint, and caps a longer hint.
      keepAliveTimeout: options.keepAliveMs,
      keepAliveMaxTimeout: options.keepAliveMs,
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
  ): AttemptControl {
    const headers = extraHeaders ? { ...extraHeaders, ...this.#headers } : this.#headers;
    const request: Dispatcher.DispatchOptions = { path: this.#path, method: 'POST', headers, body };
    const handler = new AttemptHandler(
      this,
      request,
      done,
      token,
      timeoutMs,
      allowStream,
      this.answered,
    );
    this.#pool.dispatch(request, handler);
    return handler;
  }

  /** Sends `request` once on a new connection of its own, closed after the answer. */
  sendFresh(request: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const client = new Client(this.#origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
    client.dispatch({ ...request, reset: true }, handler);
    void client.close().catch(() => undefined);
  }

  /** Closes idle connections; in-flight requests finish first. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** Drops every connection now. */
  async destroy(): Promise<void> {
    await this.#pool.destroy();
  }

  /** The options it was built with (a reload compares them). */
  get options(): TransportOptions {
    return this.#options;
  }
}
