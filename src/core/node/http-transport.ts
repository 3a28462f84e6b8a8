/**
 * How one node's attempts travel: HTTP(S) POSTs over a keep-alive undici Pool, driven through
 * `dispatch` with a callback handler (no promise chain, no stream object, no AbortController
 * per attempt). Lives behind the node so another transport can replace it without the router
 * knowing. Every attempt has a deadline covering connect, headers and body; failures are
 * values. A large 2xx answer whose first member is `result` is handed over as a stream
 * instead of being buffered.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { isResultFirst } from './result-first.js';
import { UpstreamStream } from './upstream-stream.js';

/** Largest upstream answer buffered for one attempt. */
export const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;
/** Answers larger than this may be streamed instead of buffered. */
export const STREAM_THRESHOLD = 64 * 1024;
/** Idle keep-alive connections are closed after this long. */
const KEEP_ALIVE_MS = 60_000;
/** Sockets per pool when max_concurrent does not bound them. */
const MAX_POOL_CONNECTIONS = 1024;
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

/** Extra request headers copied from the client (already lower-case). */
export type ForwardHeaders = Record<string, string> | undefined;

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describe(err: Error): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code ?? e.message;
}

/** One attempt's handler: collects the answer, enforces the deadline, settles exactly once. */
class AttemptHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #timedOut = false;
  #status = 0;
  #headers: IncomingHttpHeaders | undefined;
  #chunks: Buffer[] = [];
  #size = 0;
  #stream: UpstreamStream | undefined;
  /** Whether the stream-or-buffer decision was taken (it is taken once). */
  #decided = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (response: AttemptResponse) => void,
    private readonly timeoutMs: number,
    private readonly allowStream: boolean,
  ) {
    this.#timer = setTimeout(() => this.#expire(), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#settled) controller.abort(new Error('attempt already given up'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.#status = status;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#stream) return this.#stream.push(chunk);
    if (this.#settled) return;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    if (this.#size > MAX_RESPONSE_BYTES) {
      controller.abort(new Error('answer larger than 512 MiB'));
    } else if (!this.#decided && this.#size >= STREAM_THRESHOLD) {
      // Decide once: re-checking every later chunk would copy the body again each time.
      this.#decided = true;
      if (!this.allowStream || this.#status < 200 || this.#status >= 300) return;
      const head = this.#body();
      if (isResultFirst(head)) this.#startStream(controller, head);
    }
  }

  onResponseEnd(): void {
    if (this.#stream) return this.#stream.end();
    this.#settle({
      kind: 'answer',
      status: this.#status,
      contentType: headerValue(this.#headers?.['content-type']),
      retryAfter: headerValue(this.#headers?.['retry-after']),
      body: this.#body(),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#stream) return this.#stream.fail(error);
    const reason = this.#timedOut ? `no answer within ${this.timeoutMs} ms` : describe(error);
    const timedOut = this.#timedOut;
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut }
        : { kind: 'transport_error', reason, timedOut },
    );
  }

  #body(): Buffer {
    if (this.#chunks.length === 1) return this.#chunks[0]!;
    const body = Buffer.concat(this.#chunks, this.#size);
    this.#chunks = [body];
    return body;
  }

  #startStream(controller: Dispatcher.DispatchController, head: Buffer): void {
    this.#stream = new UpstreamStream(controller, head);
    this.#chunks = [];
    this.#settle({
      kind: 'stream',
      status: this.#status,
      contentType: headerValue(this.#headers?.['content-type']),
      stream: this.#stream,
    });
  }

  #expire(): void {
    if (this.#settled) return;
    this.#timedOut = true;
    const reason = `no answer within ${this.timeoutMs} ms`;
    // Settle now even if the request is still queued for a socket; onRequestStart aborts it then.
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut: true }
        : { kind: 'transport_error', reason, timedOut: true },
    );
    this.#controller?.abort(new Error(reason));
  }

  #settle(response: AttemptResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.resolve(response);
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
   * POSTs `body` and reads the answer, giving up after `timeoutMs`; `done` is called exactly
   * once. With `allowStream`, a large successful answer comes back as a stream the caller must
   * pipe or abort. Callback-based so an attempt costs the router one promise, not two.
   */
  send(
    body: Buffer,
    timeoutMs: number,
    extraHeaders: ForwardHeaders,
    allowStream: boolean,
    done: (response: AttemptResponse) => void,
  ): void {
    const handler = new AttemptHandler(done, timeoutMs, allowStream);
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
