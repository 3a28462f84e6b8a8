/**
 * How one node's attempts travel: HTTP(S) POSTs over keep-alive undici Clients
 * (client-stack.ts), driven through `dispatch` with a callback handler (no promise chain, no
 * stream object, no AbortController per attempt). Lives behind the node so another transport
 * can replace it without the router knowing. Every attempt has a deadline covering connect,
 * headers and body; failures are values. A large 2xx answer whose first member is `result` is
 * handed over as a stream instead of being buffered.
 */
import type { Dispatcher } from 'undici';
import { Client, type ClientOptions } from './undici-client.js';
import { AttemptHandler, type HandlerTransport } from './attempt-handler.js';
import { ClientStack } from './client-stack.js';
import type { AttemptCallback, AttemptControl, ForwardHeaders } from './attempt-response.js';
import type { DeadlineQueue } from './deadline-queue.js';
import { nodeRequestHeaders } from './upstream-headers.js';

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

/** A pooled HTTP client for one upstream URL. */
export class HttpTransport implements HandlerTransport {
  readonly #pool: ClientStack;
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
    const connection: ClientOptions = {
      pipelining: 1,
      // Applies when the upstream gives no Keep-Alive hint, and caps a longer hint.
      keepAliveTimeout: options.keepAliveMs,
      keepAliveMaxTimeout: options.keepAliveMs,
      headersTimeout: 0,
      bodyTimeout: 0,
    };
    this.#pool = new ClientStack(parsed.origin, connection, Math.max(1, options.maxConnections));
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
    /** The caller's clock reading, taken just now (else the deadline queue reads the clock). */
    now?: number,
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
      now,
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
