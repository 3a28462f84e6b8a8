/**
 * Every shared subscription: clients attach to the one upstream subscription of their
 * (family, method, canonical params), the first attach places it on a node, the last detach
 * unsubscribes upstream — except signatureSubscribe, which the node ends itself after its final
 * notification. This side keeps the clients' bookkeeping (the registry, the ids they see, their
 * subscribe and unsubscribe answers); placement, failover and gap fill live in
 * upstream-subscriptions.ts.
 */
import { randomBytes } from 'node:crypto';
import { DOOR_SUBSCRIPTION, servesDoor } from '../routing/eligibility.js';
import { SharedSubscription, type Subscriber } from './shared-subscription.js';
import { StreamFilter } from './stream-filter.js';
import type { Family, SubscribeMethod } from './subscription-methods.js';
import type { UpstreamPool } from './upstream-pool.js';
import {
  UpstreamSubscriptions,
  type HubCounters,
  type HubOptions,
} from './upstream-subscriptions.js';
import { reasonToLeave } from './ws-admission.js';
import { wsUrlOf } from './ws-url.js';

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
  readonly #upstream: UpstreamSubscriptions;
  #nextSolanaId = 1;

  constructor(private readonly options: HubOptions) {
    this.#upstream = new UpstreamSubscriptions(options, this.counters, (sub) => {
      if (this.#byKey.get(sub.key) === sub) this.#byKey.delete(sub.key);
    });
    this.pool = this.#upstream.pool;
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

  /**
   * Moves subscriptions off nodes that would not take them now (reasonToLeave: penalized, over
   * quota, cordoned, removed) or that a reload re-pointed. The gateway calls it every tickMs,
   * which is how a cordon or a penalty set anywhere (the admin API, a worker told by the primary,
   * the HTTP path) reaches the subscriptions without the setter knowing about them.
   */
  tick(): void {
    const now = this.options.route.clock.now();
    for (const sub of [...this.#byKey.values()]) {
      const socket = sub.socket;
      if (sub.state !== 'active' || socket === undefined) continue;
      const reason =
        reasonToLeave(socket.node, now) ??
        (socket.url !== wsUrlOf(socket.node.config).url ? 'reconfigured' : undefined);
      if (reason !== undefined) void this.#upstream.move(sub, reason, true);
    }
  }

  /** Shutdown: clients are closed with 1012 by the gateway; upstream sockets close here. */
  close(): void {
    this.#byKey.clear();
    this.#upstream.close();
  }

  #newId(family: Family): string {
    return family === 'solana'
      ? String(this.#nextSolanaId++)
      : `"0x${randomBytes(16).toString('hex')}"`;
  }

  async #start(sub: SharedSubscription): Promise<void> {
    const budget = this.options.route.budgetMs;
    const deadline = this.options.route.clock.now() + budget;
    const outcome = await this.#upstream.place(sub, deadline, [], true);
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
    if (sub.size === 0) return this.#upstream.end(sub, true);
    if (sub.spec.kind === 'evmLogs') void this.#anchor(sub);
  }

  /** Why no node took a subscription: none ever can (no [websocket] prices), or none now. */
  #noNode(method: string): { code: number; message: string } {
    const priced = this.options.route
      .table()
      .ranked.some((node) => !node.retired && servesDoor(node, DOOR_SUBSCRIPTION));
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

  #detach(sub: SharedSubscription, subscriber: Subscriber, idJson: string): void {
    if (!sub.detach(subscriber, idJson)) return;
    if (sub.size === 0 && sub.pending.length === 0) this.#upstream.end(sub, true);
  }
}
