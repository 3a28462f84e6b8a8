/**
 * One node's keep-alive connections: undici Clients (one connection each, pipelining 1) with
 * the free ones on a stack. undici's Pool finds a free client by walking its list from the
 * start on every dispatch, and twice, since a client with pipelining 1 is busy as soon as it
 * takes a request: with 50 requests in flight to one node the walk read dozens of busy
 * clients, ~1,600 instructions a request (bench:hotpath-instr). Here a dispatch pops a free
 * client, and a client that drains goes back on top (the most recently used connection is
 * the one most likely still open). At `max` clients, requests wait in order for the next
 * client to drain.
 *
 * The protocol is undici's documented one: `dispatch` returns false while the client is busy,
 * and it emits 'drain' when it can take a request again. A client whose connection failed
 * ('connectionError') is dropped, as undici's Pool does; one whose connection merely closed
 * reconnects on its next request.
 */
import type { Dispatcher } from 'undici';
import { Client, errors, type ClientOptions } from './undici-client.js';

/** A request waiting for a client (only when every one of `max` clients is busy). */
interface Waiting {
  readonly options: Dispatcher.DispatchOptions;
  readonly handler: Dispatcher.DispatchHandler;
}

export class ClientStack {
  readonly #free: Client[] = [];
  readonly #all = new Set<Client>();
  readonly #waiting: Waiting[] = [];
  #closed = false;
  /** Resolved when the last waiting request got a client, while closing. */
  #flushed: (() => void) | undefined = undefined;
  constructor(
    private readonly origin: string,
    private readonly options: ClientOptions,
    /** Most clients (connections) at once; at least 1. */
    private readonly max: number,
  ) {}

  /** Sends `options` on a free client, a new one, or the next to drain. */
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    if (this.#closed) {
      handler.onError?.(new errors.ClientClosedError());
      return;
    }
    const client = this.#free.pop() ?? (this.#all.size < this.max ? this.#open() : undefined);
    if (client === undefined) this.#waiting.push({ options, handler });
    else this.#send(client, options, handler);
  }

  /** Clients open now (for tests and diagnostics). */
  get size(): number {
    return this.#all.size;
  }

  /** Lets in-flight and waiting requests finish, then closes every connection. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#waiting.length > 0) {
      await new Promise<void>((resolve) => (this.#flushed = resolve));
    }
    await Promise.all([...this.#all].map((client) => client.close()));
  }

  /** Drops every connection now; requests in flight or waiting fail. */
  async destroy(): Promise<void> {
    this.#closed = true;
    const waiting = this.#waiting.splice(0);
    for (const { handler } of waiting) handler.onError?.(new errors.ClientDestroyedError());
    this.#flushed?.();
    await Promise.all([...this.#all].map((client) => client.destroy()));
  }

  #open(): Client {
    const client = new Client(this.origin, this.options);
    // One listener pair per connection (not per request).
    client.on('drain', () => this.#drained(client));
    client.on('connectionError', () => this.#drop(client));
    this.#all.add(client);
    return client;
  }

  #send(
    client: Client,
    options: Dispatcher.DispatchOptions,
    handler: Dispatcher.DispatchHandler,
  ): void {
    // False (the usual case with pipelining 1): busy until it emits 'drain'.
    if (client.dispatch(options, handler)) this.#free.push(client);
  }

  #drained(client: Client): void {
    if (!this.#all.has(client)) return;
    if (!this.#sendWaiting(client)) this.#free.push(client);
  }

  /** Gives `client` the first waiting request; false when none waits. */
  #sendWaiting(client: Client): boolean {
    const next = this.#waiting.shift();
    if (next === undefined) return false;
    this.#send(client, next.options, next.handler);
    if (this.#waiting.length === 0) this.#flushed?.();
    return true;
  }

  /**
   * A client whose connection failed is not reused: a new one replaces it when needed. It is
   * only forgotten, not closed: it emits this from inside its own failure handling, where
   * undici's Pool does not close it either (it holds no connection).
   */
  #drop(client: Client): void {
    if (!this.#all.delete(client)) return;
    const at = this.#free.indexOf(client);
    if (at !== -1) this.#free.splice(at, 1);
    // A request waiting for a client gets one now (a new connection).
    if (this.#waiting.length > 0) this.#sendWaiting(this.#open());
  }
}
