/**
 * Upstream WebSocket connections per node, and what the WebSocket side keeps per node: the
 * sockets (a new one when the open ones carry MAX_SUBSCRIPTIONS_PER_SOCKET), a short penalty
 * after a socket dropped or stalled (so the next placement looks elsewhere), the billing of
 * connections, notifications and bytes into the node's usage, and counters for /metrics.
 */
import type { Clock } from '../clock.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { BASE_PENALTY_SECONDS } from '../node/penalty.js';
import { UpstreamSocket, type SocketEnd, type UpstreamTiming } from './upstream-socket.js';
import { wsUrlOf } from './ws-url.js';

/** Distinct upstream subscriptions one socket carries before another is opened. */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 1000;
/** Bytes of one billing unit for `tenth_mb` prices. */
const TENTH_MB = 100_000;

/** Counters of one node's WebSocket traffic (read at scrape time). */
export interface NodeWsCounters {
  /** Messages received (answers and notifications). */
  messages: number;
  notifications: number;
  bytes: number;
  /** Subscriptions moved away from the node, by reason. */
  readonly failovers: Map<string, number>;
}

/** What the pool keeps for one node. */
class NodeWs {
  readonly sockets: UpstreamSocket[] = [];
  /** A socket of this node dropped or stalled: no new placement until then (clock ms). */
  penaltyUntil = 0;
  /** Received bytes not yet billed (less than one 0.1 MB unit). */
  carry = 0;
  readonly counters: NodeWsCounters = {
    messages: 0,
    notifications: 0,
    bytes: 0,
    failovers: new Map(),
  };
  readonly idle = new Map<UpstreamSocket, NodeJS.Timeout>();
}

/** The owner of the sockets hears what they say. */
export interface PoolEvents<S> {
  notification(socket: UpstreamSocket<S>, key: string, result: Buffer, parsed: unknown): void;
  down(socket: UpstreamSocket<S>, end: SocketEnd): void;
}

/** Every node's upstream WebSocket connections. */
export class UpstreamPool<S> {
  readonly #nodes = new Map<string, NodeWs>();

  constructor(
    private readonly timing: UpstreamTiming & { readonly idleCloseMs: number },
    private readonly clock: Clock,
    private readonly events: PoolEvents<S>,
  ) {}

  #state(node: UpstreamNode): NodeWs {
    let state = this.#nodes.get(node.name);
    if (state === undefined) {
      state = new NodeWs();
      this.#nodes.set(node.name, state);
    }
    return state;
  }

  /** True while a socket of `node` recently dropped or stalled. */
  isPenalized(node: UpstreamNode, now: number): boolean {
    return (this.#nodes.get(node.name)?.penaltyUntil ?? 0) > now;
  }

  /** Keeps new subscriptions off `node` for a while (its socket failed). */
  penalize(node: UpstreamNode, now: number): void {
    this.#state(node).penaltyUntil = now + BASE_PENALTY_SECONDS * 1000;
  }

  /** An open socket to `node` with room for one more subscription (connecting one if needed). */
  async acquire(node: UpstreamNode): Promise<UpstreamSocket<S>> {
    const state = this.#state(node);
    const url = wsUrlOf(node.config).url;
    // The state is kept by name, and a name can outlive its node: a reload that removes a node
    // and adds it back makes a new UpstreamNode, while sockets of the retired one may still be
    // open (idle, or carrying subscriptions on their way out). Only a socket of this very node
    // is shared: a subscription on the retired one's would be told "removed" every tick.
    let socket = state.sockets.find(
      (one) => one.node === node && one.url === url && one.load < MAX_SUBSCRIPTIONS_PER_SOCKET,
    ) as UpstreamSocket<S> | undefined;
    if (socket === undefined) {
      socket = new UpstreamSocket<S>(node, url, this.timing, this.clock, {
        notification: (s, key, result, parsed) =>
          this.events.notification(s as UpstreamSocket<S>, key, result, parsed),
        received: (s, bytes, notification) => this.#received(s.node, bytes, notification),
        down: (s, end) => this.#down(s as UpstreamSocket<S>, end),
      });
      state.sockets.push(socket);
      const usage = node.config.pricing.websocket?.connection ?? 0;
      if (usage > 0) node.usage.add(usage);
    }
    this.#busy(state, socket);
    try {
      await socket.ready;
    } catch (err) {
      this.#forget(state, socket);
      throw err;
    }
    return socket;
  }

  /** A socket with no subscription left is closed after a while (reopening costs). */
  released(socket: UpstreamSocket<S>): void {
    if (socket.load > 0) return;
    const state = this.#state(socket.node);
    // A removed node's socket is never taken again (acquire matches the node): close it now.
    if (socket.node.retired) {
      this.#forget(state, socket);
      socket.end('closed');
      return;
    }
    if (state.idle.has(socket)) return;
    const timer = setTimeout(() => {
      state.idle.delete(socket);
      if (socket.load === 0) {
        this.#forget(state, socket);
        socket.end('closed');
      }
    }, this.timing.idleCloseMs);
    timer.unref();
    state.idle.set(socket, timer);
  }

  /** Counts a subscription moved off `node`. */
  failedOver(node: UpstreamNode, reason: string): void {
    const failovers = this.#state(node).counters.failovers;
    failovers.set(reason, (failovers.get(reason) ?? 0) + 1);
  }

  /** Per node: open sockets and counters (for /metrics). */
  snapshot(name: string): { sockets: number; counters: NodeWsCounters } | undefined {
    const state = this.#nodes.get(name);
    if (state === undefined) return undefined;
    return { sockets: state.sockets.filter((s) => s.isOpen).length, counters: state.counters };
  }

  /** Every node name the pool has kept state for (a removed node's too: its counters stay). */
  names(): IterableIterator<string> {
    return this.#nodes.keys();
  }

  /** Every socket now open or opening. */
  *sockets(): IterableIterator<UpstreamSocket<S>> {
    for (const state of this.#nodes.values()) yield* state.sockets as UpstreamSocket<S>[];
  }

  /** Closes every socket (shutdown). */
  close(): void {
    for (const state of this.#nodes.values()) {
      for (const timer of state.idle.values()) clearTimeout(timer);
      state.idle.clear();
      for (const socket of state.sockets.splice(0)) socket.end('closed');
    }
  }

  #busy(state: NodeWs, socket: UpstreamSocket): void {
    const timer = state.idle.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    state.idle.delete(socket);
  }

  #forget(state: NodeWs, socket: UpstreamSocket): void {
    const at = state.sockets.indexOf(socket);
    if (at !== -1) state.sockets.splice(at, 1);
    this.#busy(state, socket);
  }

  #down(socket: UpstreamSocket<S>, end: SocketEnd): void {
    const state = this.#state(socket.node);
    this.#forget(state, socket);
    if (end !== 'closed') this.penalize(socket.node, this.clock.now());
    this.events.down(socket, end);
  }

  /** Bills what arrived: per notification, and per whole 0.1 MB (the rest carried over). */
  #received(node: UpstreamNode, bytes: number, notification: boolean): void {
    const state = this.#state(node);
    state.counters.bytes += bytes;
    state.counters.messages++;
    if (notification) state.counters.notifications++;
    const prices = node.config.pricing.websocket;
    if (prices === undefined) return;
    let credits = notification ? prices.notification : 0;
    if (prices.tenthMb > 0) {
      state.carry += bytes;
      if (state.carry >= TENTH_MB) {
        const units = Math.floor(state.carry / TENTH_MB);
        state.carry -= units * TENTH_MB;
        credits += units * prices.tenthMb;
      }
    }
    if (credits > 0) node.usage.add(credits);
  }
}
