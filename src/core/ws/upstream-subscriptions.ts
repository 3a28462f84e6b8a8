/**
 * The upstream side of the shared subscriptions (subscription-hub.ts keeps the client side):
 * a subscription is placed on a node (ws-admission.ts) and bound to the id the node answered;
 * when its socket drops or stalls, or its node is penalized, over quota, cordoned or removed, it
 * moves to the next eligible node with its client ids unchanged, and the gap is filled
 * (gap-fill.ts): the one a broken socket leaves, and the one between an old node and a new node
 * ahead of it on a voluntary move. No node to move to after a broken socket: its clients are
 * closed with 1013 (1012 when cascade is shutting down) — never 1000, after which web3.js and
 * kit stop silently; a voluntary move with nowhere to go leaves the subscription where it is.
 */
import type { Logger } from 'pino';
import { Family, Level, headSlot } from '../chain/chain-state.js';
import { readStreamHead } from '../chain/stream-heads.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { errorFault } from '../protocol/upstream-errors.js';
import type { RouteContext } from '../routing/route-context.js';
import { HEAD_FRESH_MS, canFillGap, fillGap, type RouterCall } from './gap-fill.js';
import type { SharedSubscription } from './shared-subscription.js';
import type { SubscribeMethod } from './subscription-methods.js';
import { UpstreamPool } from './upstream-pool.js';
import type { SocketEnd, UpstreamSocket, UpstreamTiming } from './upstream-socket.js';
import { placeSubscription } from './ws-admission.js';

const EVM_LATEST = headSlot(Family.evm, Level.latest);

/** Close codes (RFC 6455 §7.4.1 and the IANA registry): cascade is restarting. */
export const CLOSE_SERVICE_RESTART = 1012;
/** Close code: no node can serve now; come back later. */
export const CLOSE_TRY_AGAIN_LATER = 1013;

/** What the hub needs. */
export interface HubOptions {
  readonly route: RouteContext;
  readonly call: RouterCall;
  readonly logger: Logger;
  readonly timing: UpstreamTiming & {
    readonly idleCloseMs: number;
    /** How long a failover keeps looking for a node before closing clients with 1013. */
    readonly failoverBudgetMs: number;
  };
}

/** Counters for /metrics and tests. */
export interface HubCounters {
  /** Gap fills run, by stream kind, and the notifications they sent. */
  readonly gapFills: Map<string, number>;
  gapFillNotifications: number;
  /** Notification messages sent to clients. */
  delivered: number;
  /** Client sockets closed because no node could serve a subscription. */
  noNodeCloses: number;
}

/** How placing a subscription ended: on a node, no node, given up, or the node's error reply. */
export type PlaceOutcome =
  'placed' | 'none' | 'abandoned' | { readonly code: number; readonly message: string };

/** Places, binds, moves and ends the upstream subscriptions of one hub. */
export class UpstreamSubscriptions {
  readonly pool: UpstreamPool<SharedSubscription>;
  #closing = false;

  constructor(
    private readonly options: HubOptions,
    private readonly counters: HubCounters,
    /** Drops an ended subscription from the hub's registry. */
    private readonly forget: (sub: SharedSubscription) => void,
  ) {
    const clock = options.route.clock;
    this.pool = new UpstreamPool<SharedSubscription>(options.timing, clock, {
      notification: (socket, key, bytes, parsed) =>
        this.#onNotification(socket, key, bytes, parsed),
      down: (socket, end) => this.#onDown(socket, end),
    });
  }

  /** Shutdown: nothing is placed or moved any more, and the upstream sockets close. */
  close(): void {
    this.#closing = true;
    this.pool.close();
  }

  /** Places `sub` on the first eligible node that takes its subscribe call. */
  async place(
    sub: SharedSubscription,
    deadline: number,
    excluded: UpstreamNode[],
    mayFailOpen: boolean,
  ): Promise<PlaceOutcome> {
    const { route } = this.options;
    for (;;) {
      if (this.#closing || sub.ended) return 'abandoned';
      const now = route.clock.now();
      if (now >= deadline) return 'none';
      const placement = placeSubscription(
        route.table(),
        now,
        excluded,
        (n, t) => this.pool.isPenalized(n, t),
        mayFailOpen,
      );
      if (placement.kind === 'none') return 'none';
      if (placement.kind === 'wait') {
        await route.clock.sleep(Math.min(placement.ms, deadline - now));
        continue;
      }
      const node = placement.node;
      excluded.push(node);
      let socket: UpstreamSocket<SharedSubscription>;
      try {
        socket = await this.pool.acquire(node);
      } catch (err) {
        this.pool.penalize(node, route.clock.now());
        this.options.logger.warn(
          { node: node.name, err: (err as Error).message },
          'WebSocket connection failed',
        );
        continue;
      }
      const price = node.config.pricing.websocket?.subscribe ?? 0;
      if (price > 0) node.usage.add(price);
      const reply = await socket.call(sub.spec.method, sub.paramsJson).catch(() => undefined);
      if (reply === undefined) continue;
      if (reply.kind === 'error') {
        this.pool.released(socket);
        if (errorFault(reply.code, reply.message) === 'request') return reply;
        continue;
      }
      // Synchronous from the answer on: no notification of the new id can come first.
      if (this.#closing || sub.ended) {
        this.#unsubscribeUpstream(sub.spec, socket, reply.text);
        return 'abandoned';
      }
      this.#bind(sub, socket, reply.text);
      return 'placed';
    }
  }

  /** The subscription is over: upstream let go of, and it leaves the registry. */
  end(sub: SharedSubscription, unsubscribe: boolean): void {
    if (sub.state === 'ended') return;
    sub.state = 'ended';
    this.forget(sub);
    this.#unbind(sub, unsubscribe);
    for (const [subscriber, ids] of [...sub.clients])
      for (const id of [...ids]) sub.detach(subscriber, id);
  }

  /**
   * Moves `sub` to another node. With `alive`, its socket still works (penalty, quota, cordon,
   * reload): it keeps streaming until the new subscription exists, and stays if none can be
   * made (the hub's next tick tries again). Either way a gap is filled before the new node's
   * notifications go out: a broken socket's, or — the new node may be ahead of the old one —
   * the blocks between them. A failover is counted once the subscription has left the node: at
   * once for a broken socket, after the new subscription exists for a live one — so a move
   * retried tick after tick while no node can take it is not counted each time.
   */
  async move(sub: SharedSubscription, reason: string, alive: boolean): Promise<void> {
    const old = sub.socket;
    if (sub.state !== 'active' || old === undefined) return;
    sub.state = 'moving';
    if (!alive) this.pool.failedOver(old.node, reason);
    const oldKey = sub.upstreamKey;
    if (!alive) {
      sub.socket = undefined;
      sub.upstreamKey = undefined;
      sub.held = [];
    }
    const deadline = this.options.route.clock.now() + this.options.timing.failoverBudgetMs;
    let outcome = await this.place(sub, deadline, [old.node], !alive);
    // A broken socket's own node is the last resort (a single provider that restarted).
    if (outcome === 'none' && !alive) outcome = await this.place(sub, deadline, [], true);
    if (outcome !== 'placed') {
      if (sub.ended) return;
      if (alive) {
        sub.state = 'active';
        return;
      }
      sub.release();
      return this.#giveUp(sub);
    }
    if (alive) {
      this.pool.failedOver(old.node, reason);
      this.#unbindFrom(sub, old, oldKey);
    }
    sub.state = 'active';
    // Held since a broken socket went, or since #bind on a voluntary move of a fillable stream.
    if (sub.held !== undefined) await this.#fill(sub);
    if (sub.filter.finished) this.end(sub, true);
    else if (sub.size === 0) this.end(sub, true);
  }

  #bind(sub: SharedSubscription, socket: UpstreamSocket<SharedSubscription>, key: string): void {
    // A voluntary move (the old socket still bound): the new node may be ahead of the old one,
    // so its notifications wait, from the first, until the gap between them is filled.
    if (sub.state === 'moving' && sub.socket !== undefined && canFillGap(sub.spec.kind))
      sub.held = [];
    sub.socket = socket;
    sub.upstreamKey = key;
    let set = socket.subscriptions.get(key);
    if (set === undefined) socket.subscriptions.set(key, (set = new Set()));
    set.add(sub);
    if (sub.spec.family === 'solana') socket.carriesSolana = true;
  }

  /** Lets go of `sub`'s upstream subscription; unsubscribes when nothing else shares its id. */
  #unbind(sub: SharedSubscription, unsubscribe: boolean): void {
    const { socket, upstreamKey } = sub;
    sub.socket = undefined;
    sub.upstreamKey = undefined;
    if (socket !== undefined) this.#unbindFrom(sub, socket, upstreamKey, unsubscribe);
  }

  /** Takes `sub` off `key` on `socket` (its old one after a move, or its current one). */
  #unbindFrom(
    sub: SharedSubscription,
    socket: UpstreamSocket<SharedSubscription>,
    key: string | undefined,
    unsubscribe = true,
  ): void {
    if (key === undefined) return;
    const set = socket.subscriptions.get(key);
    set?.delete(sub);
    if (set !== undefined && set.size > 0) return;
    socket.subscriptions.delete(key);
    if (unsubscribe && socket.isOpen) this.#unsubscribeUpstream(sub.spec, socket, key);
    this.pool.released(socket);
  }

  #unsubscribeUpstream(
    spec: SubscribeMethod,
    socket: UpstreamSocket<SharedSubscription>,
    key: string,
  ): void {
    const price = socket.node.config.pricing.websocket?.unsubscribe ?? 0;
    if (price > 0) socket.node.usage.add(price);
    socket.call(spec.unsubscribe, `[${key}]`).catch(() => undefined);
  }

  #onNotification(
    socket: UpstreamSocket<SharedSubscription>,
    key: string,
    bytes: Buffer,
    parsed: unknown,
  ): void {
    const set = socket.subscriptions.get(key);
    if (set === undefined) return;
    // Slot, root and newHeads notifications are the node's head, read for lag-aware routing.
    const chain = this.options.route.table().chain;
    const first = set.values().next().value;
    if (chain !== undefined && first !== undefined) {
      readStreamHead(
        chain,
        socket.node.heads,
        first.spec.kind,
        bytes,
        this.options.route.clock.now(),
      );
    }
    for (const sub of [...set]) {
      if (sub.socket !== socket) continue;
      sub.deliver(bytes, parsed);
      // The node ended a signature subscription with its final notification: no unsubscribe.
      if (sub.filter.finished) this.end(sub, false);
    }
  }

  #onDown(socket: UpstreamSocket<SharedSubscription>, end: SocketEnd): void {
    if (this.#closing) return;
    for (const set of [...socket.subscriptions.values()]) {
      for (const sub of set) if (sub.socket === socket) void this.move(sub, end, false);
    }
    socket.subscriptions.clear();
  }

  /** The EVM head the one chain tracker knows fresh (gap fill asks only without it). */
  readonly #knownHead = (): number => {
    const chain = this.options.route.table().chain;
    if (chain === undefined) return -1;
    return chain.recentHead(EVM_LATEST, this.options.route.clock.now(), HEAD_FRESH_MS);
  };

  async #fill(sub: SharedSubscription): Promise<void> {
    const kind = sub.spec.kind;
    try {
      const sent = await fillGap(sub, this.options.call, this.#knownHead);
      this.counters.gapFills.set(kind, (this.counters.gapFills.get(kind) ?? 0) + 1);
      this.counters.gapFillNotifications += sent;
    } catch (err) {
      this.options.logger.warn(
        { kind, err: (err as Error).message },
        'subscription gap fill failed',
      );
    } finally {
      sub.release();
    }
  }

  /** No node can serve `sub`: its clients are told to come back later (never 1000). */
  #giveUp(sub: SharedSubscription): void {
    const code = this.#closing ? CLOSE_SERVICE_RESTART : CLOSE_TRY_AGAIN_LATER;
    const clients = [...sub.clients.keys()];
    this.end(sub, false);
    this.options.logger.warn(
      { method: sub.spec.method, clients: clients.length },
      'no node can serve a subscription; closing its clients (1013)',
    );
    for (const subscriber of clients) {
      this.counters.noNodeCloses++;
      subscriber.close(code, 'no node can serve this subscription now');
    }
  }
}
