/**
 * One WebSocket connection to a node: JSON-RPC calls matched to their answers by id,
 * notifications handed on by upstream subscription id, and a keep-alive that is also the
 * stall detector — a WebSocket ping every interval (plus the JSON `ping` Solana clients send,
 * for nodes and balancers that close sockets idle at the JSON level), and a socket that let
 * two pings in a row go unanswered — not a byte or a pong back by the following tick — is
 * declared stalled and cut. Ticks are counted rather than times compared: a busy or paused
 * event loop runs a late timer before it reads the pong waiting on the socket, and a
 * wall-clock test would cut healthy sockets exactly when the machine is loaded.
 */
import WebSocket from 'ws';
import type { Clock, ClockTimer } from '../clock.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { memberValueSpan, trimmedSpan } from '../protocol/json-spans.js';
import { wsUpgradeHeaders } from './ws-url.js';

/** Why a socket is gone: its node dropped it, it stalled, or cascade closed it. */
export type SocketEnd = 'dropped' | 'stalled' | 'closed';

/** Timings of upstream sockets (defaults in ws-options.ts). */
export interface UpstreamTiming {
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** Keep-alive period; a socket that answers none of two pings in a row is stalled. */
  readonly pingIntervalMs: number;
}

/** A call's answer: its result (parsed, and as the node wrote it), or its error. */
export type CallReply =
  | { readonly kind: 'result'; readonly result: unknown; readonly text: string }
  | { readonly kind: 'error'; readonly code: number; readonly message: string };

/** What a socket tells its owner. */
export interface UpstreamSocketEvents {
  /** A notification for upstream subscription `key` (the id's JSON text). */
  notification(socket: UpstreamSocket, key: string, result: Buffer, parsed: unknown): void;
  /** `bytes` arrived (billing); `notification` when they were one. */
  received(socket: UpstreamSocket, bytes: number, notification: boolean): void;
  /** The socket is gone (once). */
  down(socket: UpstreamSocket, end: SocketEnd): void;
}

/** Most a node may send in one message (a full block notification is a few MB). */
const MAX_INBOUND_BYTES = 128 * 1024 * 1024;
const JSON_PING = '{"jsonrpc":"2.0","method":"ping"}';

interface Pending {
  readonly resolve: (reply: CallReply) => void;
  readonly reject: (err: Error) => void;
  readonly timer: ClockTimer;
}

type Message = {
  id?: unknown;
  method?: unknown;
  params?: { subscription?: unknown; result?: unknown };
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
};

/** A connection to one node's WebSocket endpoint. */
export class UpstreamSocket<S = unknown> {
  /** Upstream subscription id (JSON text) → what listens to it. */
  readonly subscriptions = new Map<string, Set<S>>();
  /** Set while Solana subscriptions ride on it (they get the JSON ping too). */
  carriesSolana = false;
  #ws: WebSocket;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #state: 'connecting' | 'open' | 'down' = 'connecting';
  /** Pings sent since the node last sent anything (a pong included). */
  #unanswered = 0;
  #keepAlive: NodeJS.Timeout | undefined;
  #ending: SocketEnd | undefined;
  /** Resolves when open; rejects when the connection could not be made. */
  readonly ready: Promise<void>;

  constructor(
    readonly node: UpstreamNode,
    readonly url: string,
    private readonly timing: UpstreamTiming,
    private readonly clock: Clock,
    private readonly events: UpstreamSocketEvents,
  ) {
    this.#ws = new WebSocket(url, {
      headers: wsUpgradeHeaders(url, node.config.headers),
      handshakeTimeout: timing.connectTimeoutMs,
      perMessageDeflate: false,
      maxPayload: MAX_INBOUND_BYTES,
      // One message per event-loop turn: the subscription a subscribe answer creates is
      // recorded (after an await) before the notification that follows it in the same packet.
      allowSynchronousEvents: false,
    });
    this.ready = new Promise((resolve, reject) => {
      this.#ws.once('open', () => {
        this.#state = 'open';
        this.#keepAlive = setInterval(() => this.#tick(), timing.pingIntervalMs);
        this.#keepAlive.unref();
        resolve();
      });
      this.#ws.once('close', () => reject(new Error('connection closed before it opened')));
      this.#ws.once('error', (err) => reject(err));
    });
    this.ready.catch(() => undefined);
    this.#ws.on('message', (data: Buffer) => this.#onMessage(data));
    this.#ws.on('pong', () => (this.#unanswered = 0));
    this.#ws.on('error', () => undefined);
    this.#ws.on('close', () => this.#down(this.#ending ?? 'dropped'));
  }

  get isOpen(): boolean {
    return this.#state === 'open';
  }

  /** Subscriptions riding on the socket (distinct upstream ids). */
  get load(): number {
    return this.subscriptions.size;
  }

  /** Sends a call; resolves with its answer, rejects if the socket goes or the deadline passes. */
  call(method: string, paramsJson: string): Promise<CallReply> {
    if (this.#state !== 'open') return Promise.reject(new Error('socket not open'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = this.clock.setTimer(() => {
        this.#pending.delete(id);
        reject(new Error(`${method}: no answer within ${this.timing.requestTimeoutMs} ms`));
        this.end('stalled');
      }, this.timing.requestTimeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#ws.send(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${paramsJson}}`);
    });
  }

  /** Cuts the connection; `closed` (cascade's own decision) tells the owner nothing failed. */
  end(reason: SocketEnd = 'closed'): void {
    if (this.#state === 'down' || this.#ending !== undefined) return;
    this.#ending = reason;
    if (reason === 'closed' && this.#state === 'open') this.#ws.close(1000);
    else this.#ws.terminate();
  }

  /** Two pings in a row unanswered by this tick: stalled. */
  #tick(): void {
    if (this.#unanswered >= 2) {
      this.end('stalled');
      return;
    }
    this.#unanswered++;
    this.#ws.ping();
    if (this.carriesSolana) this.#ws.send(JSON_PING);
  }

  #down(end: SocketEnd): void {
    if (this.#state === 'down') return;
    const wasOpen = this.#state === 'open';
    this.#state = 'down';
    clearInterval(this.#keepAlive);
    for (const pending of this.#pending.values()) {
      pending.timer.cancel();
      pending.reject(new Error(`socket ${end}`));
    }
    this.#pending.clear();
    if (wasOpen) this.events.down(this, end);
  }

  #onMessage(data: Buffer): void {
    this.#unanswered = 0;
    let message: Message;
    try {
      message = JSON.parse(data.toString('utf8')) as Message;
    } catch {
      this.events.received(this, data.length, false);
      return;
    }
    if (typeof message !== 'object' || message === null) return;
    const params = message.params;
    const isNotification =
      typeof message.method === 'string' &&
      typeof params === 'object' &&
      params !== null &&
      'subscription' in params;
    this.events.received(this, data.length, isNotification);
    if (isNotification) {
      const key = JSON.stringify(params.subscription);
      this.events.notification(this, key, resultBytes(data, params.result), params.result);
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    pending.timer.cancel();
    if (message.error !== undefined) {
      const code = typeof message.error.code === 'number' ? message.error.code : -32603;
      const text = typeof message.error.message === 'string' ? message.error.message : 'error';
      pending.resolve({ kind: 'error', code, message: text });
    } else {
      pending.resolve({
        kind: 'result',
        result: message.result,
        text: JSON.stringify(message.result),
      });
    }
  }
}

/**
 * A notification's `result` exactly as the node wrote it (an integer beyond 2^53, such as
 * rentEpoch, keeps its digits); re-serialised only when the bytes cannot be cut safely.
 */
function resultBytes(data: Buffer, parsed: unknown): Buffer {
  const params = memberValueSpan(data, trimmedSpan(data), 'params');
  if (params) {
    const result = memberValueSpan(data, params, 'result');
    if (result) return data.subarray(result.start, result.end);
  }
  return Buffer.from(JSON.stringify(parsed) ?? 'null');
}
