/**
 * Every shared subscription: clients attach to the one upstream subscription of their
 * (family, method, canonical params), the first attach places it on a node (ws-admission.ts),
 * the last detach unsubscribes upstream — except signatureSubscribe, which the node ends itself
 * after its final notification. When a socket drops or stalls, or its node is penalized, over
 * quota or removed, the subscription moves to the next eligible node with its client ids
 * unchanged, and a gap left by a broken socket is filled (gap-fill.ts). No node to move to:
 * its clients are closed with 1013 (1012 when cascade is shutting down) — never 1000, after
 * which web3.js and kit stop silently.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { UpstreamNode } from '../node/upstream-node.js';
import { errorFault } from '../protocol/upstream-errors.js';
import type { RouteContext } from '../routing/route-context.js';
import { fillGap, type RouterCall } from './gap-fill.js';
import { SharedSubscription, type Subscriber } from './shared-subscription.js';
import { StreamFilter } from './stream-filter.js';
import type { Family, SubscribeMethod } from './subscription-methods.js';
import { UpstreamPool } from './upstream-pool.js';
import type { SocketEnd, UpstreamSocket, UpstreamTiming } from './upstream-socket.js';
import { placeSubscription, reasonToLeave } from './ws-admission.js';
import { wsUrlOf } from './ws-url.js';

/** Close codes (RFC 6455 §7.4.1 and the IANA registry). */
export const CLOSE_SERVICE_RESTART = 1012;
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

type Outcome =
  'placed' | 'none' | 'abandoned' | { readonly code: number; readonly message: string };

function answerJson(resultJson: string, requestIdJson: string): string {
  return `{"jsonrpc":"2.0","result":${resultJson},"id":${requestIdJson}}`;
}

function errorAnswer(code: number, message: string, requestIdJson: string): string {
  return `{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}},"id":${requestIdJson}}`;
}

/** The shared subscriptions of one cascade. */
export class SubscriptionHub {
  readonly pool: UpstreamPool<SharedSubscription>;
  readonly counters: HubCounters = {
    gapFills: new Map(),
    gapFillNotifications: 0,
    delivered: 0,
    noNodeCloses: 0,
  };
  readonly #byKey = new Map<string, SharedSubscription>();
  #nextSolanaId = 1;
  #closing = false;

  constructor(private readonly options: HubOptions) {
    const clock = options.route.clock;
    this.pool = new UpstreamPool<SharedSubscription>(options.timing, clock, {
      notification: (socket, key, bytes, parsed) =>
        this.#onNotification(socket, key, bytes, parsed),
      down: (socket, end) => this.#onDown(socket, end),
    });
  }

  /** Shared subscriptions now, and client attachments over all of them. */
  counts(): { shared: number; clients: number; upstream: number } {
    let clients = 0;
    let upstream = 0;
    for (const sub of this.#byKey.values()) {
      clients += sub.size;
      if (sub.socket !== undefined) upstream++;
    }
    return { shared: this.#byKey.size, clients, upstream };
  }

  /** Upstream subscriptions per node name (for /metrics). */
  upstreamByNode(): Map<string, number> {
    const byNode = new Map<string, number>();
    for (const socket of this.pool.sockets()) {
      byNode.set(socket.node.name, (byNode.get(socket.node.name) ?? 0) + socket.load);
    }
    return byNode;
  }

  /** A client's subscribe call: answered with cascade's id once the upstream one exists. */
  subscribe(
    subscriber: Subscriber,
    spec: SubscribeMethod,
    paramsJson: string,
    params: readonly unknown[],
    requestIdJson: string,
  ): void {
    const key = `${spec.family}|${spec.method}|${paramsJson}`;
    const existing = this.#byKey.get(key);
    if (existing !== undefined && existing.state !== 'placing') {
      const id = subscriber.subscriptions.has(existing.idJson)
        ? this.#newId(spec.family)
        : existing.idJson;
      if (subscriber.send(answerJson(id, requestIdJson))) existing.attach(subscriber, id);
      return;
    }
    subscriber.pendingSubscribes++;
    if (existing !== undefined) {
      existing.pending.push({ subscriber, requestIdJson });
      return;
    }
    const sub = new SharedSubscription(
      key,
      spec,
      paramsJson,
      params,
      this.#newId(spec.family),
      new StreamFilter(spec.kind),
      this.counters,
    );
    sub.pending.push({ subscriber, requestIdJson });
    this.#byKey.set(key, sub);
    void this.#start(sub);
  }

  /** A client's unsubscribe call, answered locally (true, or the node's error for an unknown id). */
  unsubscribe(
    subscriber: Subscriber,
    family: Family,
    target: unknown,
    requestIdJson: string,
  ): string {
    const idJson = JSON.stringify(target ?? null);
    const sub = subscriber.subscriptions.get(idJson);
    if (sub === undefined || sub.spec.family !== family) {
      return family === 'solana'
        ? errorAnswer(-32602, 'Invalid subscription id.', requestIdJson)
        : errorAnswer(-32000, 'subscription not found', requestIdJson);
    }
    this.#detach(sub, subscriber, idJson);
    return answerJson('true', requestIdJson);
  }

  /** A client went away: every subscription it held or waited for lets it go. */
  detachAll(subscriber: Subscriber): void {
    for (const [idJson, sub] of [...subscriber.subscriptions])
      this.#detach(sub, subscriber, idJson);
    if (subscriber.pendingSubscribes === 0) return;
    for (const sub of this.#byKey.values()) {
      if (sub.pending.length === 0) continue;
      const kept = sub.pending.filter((entry) => entry.subscriber !== subscriber);
      sub.pending.splice(0, sub.pending.length, ...kept);
    }
    subscriber.pendingSubscribes = 0;
  }

  /** Moves subscriptions off nodes that are penalized, over quota, removed or re-pointed. */
  tick(): void {
    const now = this.options.route.clock.now();
    for (const sub of [...this.#byKey.values()]) {
      const socket = sub.socket;
      if (sub.state !== 'active' || socket === undefined) continue;
      const reason =
        reasonToLeave(socket.node, now) ??
        (socket.url !== wsUrlOf(socket.node.config).url ? 'reconfigured' : undefined);
      if (reason !== undefined) void this.#move(sub, reason, true);
    }
  }

  /** Shutdown: clients are closed with 1012 by the gateway; upstream sockets close here. */
  close(): void {
    this.#closing = true;
    this.#byKey.clear();
    this.pool.close();
  }

  #newId(family: Family): string {
    return family === 'solana'
      ? String(this.#nextSolanaId++)
      : `"0x${randomBytes(16).toString('hex')}"`;
  }

  async #start(sub: SharedSubscription): Promise<void> {
    const budget = this.options.route.budgetMs;
    const outcome = await this.#place(sub, this.options.route.clock.now() + budget, [], true);
    const pending = sub.pending.splice(0);
    for (const entry of pending) entry.subscriber.pendingSubscribes--;
    if (outcome !== 'placed') {
      this.#byKey.delete(sub.key);
      const reply = typeof outcome === 'object' ? outcome : this.#noNode(sub.spec.method);
      for (const entry of pending)
        entry.subscriber.send(errorAnswer(reply.code, reply.message, entry.requestIdJson));
      return;
    }
    sub.state = 'active';
    for (const { subscriber, requestIdJson } of pending) {
      if (subscriber.subscriptions.has(sub.idJson) && sub.clients.has(subscriber)) {
        const id = this.#newId(sub.spec.family);
        if (subscriber.send(answerJson(id, requestIdJson))) sub.attach(subscriber, id);
      } else if (subscriber.send(answerJson(sub.idJson, requestIdJson))) {
        sub.attach(subscriber, sub.idJson);
      }
    }
    if (sub.size === 0) return this.#end(sub, true);
    if (sub.spec.kind === 'evmLogs') void this.#anchor(sub);
  }

  /** Why no node took a subscription: none ever can (no [websocket] prices), or none now. */
  #noNode(method: string): { code: number; message: string } {
    const priced = this.options.route
      .table()
      .ranked.some((node) => !node.retired && node.config.pricing.websocket !== undefined);
    const message = priced
      ? `No node can take ${method} now; retry later`
      : "No node takes WebSocket subscriptions: add a [websocket] table to a node's price list";
    return { code: -32000, message };
  }

  /** Where a logs back-fill would start if no log arrives before a failover. */
  async #anchor(sub: SharedSubscription): Promise<void> {
    try {
      const head = await this.options.call('eth_blockNumber', '[]');
      if (typeof head === 'string') sub.anchor = Number.parseInt(head, 16);
    } catch {
      // Without an anchor a back-fill starts at the first log the stream sends.
    }
  }

  /** Places `sub` on the first eligible node that takes its subscribe call. */
  async #place(
    sub: SharedSubscription,
    deadline: number,
    excluded: UpstreamNode[],
    mayFailOpen: boolean,
  ): Promise<Outcome> {
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

  #bind(sub: SharedSubscription, socket: UpstreamSocket<SharedSubscription>, key: string): void {
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
    if (socket === undefined || upstreamKey === undefined) return;
    const set = socket.subscriptions.get(upstreamKey);
    set?.delete(sub);
    if (set !== undefined && set.size > 0) return;
    socket.subscriptions.delete(upstreamKey);
    if (unsubscribe && socket.isOpen) this.#unsubscribeUpstream(sub.spec, socket, upstreamKey);
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

  #detach(sub: SharedSubscription, subscriber: Subscriber, idJson: string): void {
    if (!sub.detach(subscriber, idJson)) return;
    if (sub.size === 0 && sub.pending.length === 0) this.#end(sub, true);
  }

  /** The subscription is over: upstream let go of, and it leaves the registry. */
  #end(sub: SharedSubscription, unsubscribe: boolean): void {
    if (sub.state === 'ended') return;
    sub.state = 'ended';
    if (this.#byKey.get(sub.key) === sub) this.#byKey.delete(sub.key);
    this.#unbind(sub, unsubscribe);
    for (const [subscriber, ids] of [...sub.clients])
      for (const id of [...ids]) sub.detach(subscriber, id);
  }

  #onNotification(
    socket: UpstreamSocket<SharedSubscription>,
    key: string,
    bytes: Buffer,
    parsed: unknown,
  ): void {
    const set = socket.subscriptions.get(key);
    if (set === undefined) return;
    for (const sub of [...set]) {
      if (sub.socket !== socket) continue;
      sub.deliver(bytes, parsed);
      // The node ended a signature subscription with its final notification: no unsubscribe.
      if (sub.filter.finished) this.#end(sub, false);
    }
  }

  #onDown(socket: UpstreamSocket<SharedSubscription>, end: SocketEnd): void {
    if (this.#closing) return;
    for (const set of [...socket.subscriptions.values()]) {
      for (const sub of set) if (sub.socket === socket) void this.#move(sub, end, false);
    }
    socket.subscriptions.clear();
  }

  /**
   * Moves `sub` to another node. With `alive`, its socket still works (penalty, quota, reload):
   * it keeps streaming until the new subscription exists, and stays if none can be made. A
   * broken socket leaves a gap, filled before live notifications resume.
   */
  async #move(sub: SharedSubscription, reason: string, alive: boolean): Promise<void> {
    const old = sub.socket;
    if (sub.state !== 'active' || old === undefined) return;
    sub.state = 'moving';
    this.pool.failedOver(old.node, reason);
    const oldKey = sub.upstreamKey;
    if (!alive) {
      sub.socket = undefined;
      sub.upstreamKey = undefined;
      sub.held = [];
    }
    const deadline = this.options.route.clock.now() + this.options.timing.failoverBudgetMs;
    let outcome = await this.#place(sub, deadline, [old.node], !alive);
    // A broken socket's own node is the last resort (a single provider that restarted).
    if (outcome === 'none' && !alive) outcome = await this.#place(sub, deadline, [], true);
    if (outcome !== 'placed') {
      if (sub.ended) return;
      if (alive) {
        sub.state = 'active';
        return;
      }
      sub.release();
      return this.#giveUp(sub);
    }
    if (alive) this.#unbindFrom(sub, old, oldKey);
    sub.state = 'active';
    if (!alive) await this.#fill(sub);
    if (sub.filter.finished) this.#end(sub, true);
    else if (sub.size === 0) this.#end(sub, true);
  }

  #unbindFrom(
    sub: SharedSubscription,
    socket: UpstreamSocket<SharedSubscription>,
    key: string | undefined,
  ): void {
    if (key === undefined) return;
    const set = socket.subscriptions.get(key);
    set?.delete(sub);
    if (set !== undefined && set.size > 0) return;
    socket.subscriptions.delete(key);
    if (socket.isOpen) this.#unsubscribeUpstream(sub.spec, socket, key);
    this.pool.released(socket);
  }

  async #fill(sub: SharedSubscription): Promise<void> {
    const kind = sub.spec.kind;
    try {
      const sent = await fillGap(sub, this.options.call);
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
    this.#end(sub, false);
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
