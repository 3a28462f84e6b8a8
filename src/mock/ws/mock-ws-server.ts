/**
 * The WebSocket side of a mock node, on its HTTP port (like a provider's `wss://` endpoint):
 * plain JSON-RPC calls answered by the node's responder, subscriptions fed by the chain it
 * follows, and faults a test can switch on — drop every socket, stall (accept, then never
 * answer, notify or pong), refuse subscriptions, refuse the upgrade.
 */
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { paramAt } from '../method-spec.js';
import { parseBody } from '../rpc-responder.js';
import type { RpcResponder } from '../rpc-responder.js';
import type { ChainEvent, MockChain } from './mock-chain.js';
import type { MockWsControl, MockWsFault, MockWsStats } from './mock-ws-control.js';
import {
  EVM_KINDS,
  SOLANA_SUBSCRIBE,
  SOLANA_UNSUBSCRIBE,
  paramProblem,
  resultsFor,
  signatureOnSubscribe,
  type MockSubscription,
} from './mock-subscriptions.js';
import { evmNotification, solanaNotification } from './notification-json.js';

/** agave's answer when a node will not take another subscription (rpc_pubsub.rs). */
const REFUSED = {
  code: -32603,
  message: 'Internal Error: Subscription refused. Node subscription limit reached',
};

interface Connection {
  readonly socket: WebSocket;
  readonly subs: Map<string, MockSubscription & { readonly id: number | string }>;
  stalled: boolean;
}

function answer(id: unknown, result: string): string {
  return `{"jsonrpc":"2.0","result":${result},"id":${JSON.stringify(id ?? null)}}`;
}

function failure(id: unknown, code: number, message: string): string {
  return `{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}},"id":${JSON.stringify(id ?? null)}}`;
}

/** A mock node's WebSocket endpoint. */
export class MockWsServer implements MockWsControl {
  readonly #wss = new WebSocketServer({
    noServer: true,
    autoPong: false,
    perMessageDeflate: false,
  });
  readonly #connections = new Set<Connection>();
  readonly #upgradeHeaders: IncomingHttpHeaders[] = [];
  /** Solana ids are node-wide and identical params share one, as agave's SubscriptionControl does. */
  readonly #solanaIds = new Map<string, number>();
  #nextSolanaId = 0;
  #fault: MockWsFault = { kind: 'none' };
  #unlisten: (() => void) | undefined;
  readonly #stats: MockWsStats = {
    connections: 0,
    accepted: 0,
    subscriptions: 0,
    subscribes: {},
    unsubscribes: 0,
    notifications: 0,
    requests: 0,
  };

  constructor(
    server: Server,
    private readonly chain: MockChain,
    private readonly responder: () => RpcResponder,
  ) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#upgrade(req, socket, head),
    );
  }

  setFault(fault: MockWsFault): void {
    this.#fault = fault;
    const stall = fault.kind === 'stall';
    for (const conn of this.#connections) this.#stall(conn, stall);
  }

  drop(): void {
    for (const conn of this.#connections) conn.socket.terminate();
  }

  stats(): MockWsStats {
    return { ...this.#stats, subscribes: { ...this.#stats.subscribes } };
  }

  upgradeHeaders(): readonly IncomingHttpHeaders[] {
    return this.#upgradeHeaders;
  }

  /** Ends every connection (node shutdown). */
  close(): void {
    this.drop();
    this.#wss.close();
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const fault = this.#fault;
    if (fault.kind === 'refuse_connect') {
      const status = fault.status ?? 503;
      socket.end(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    this.#upgradeHeaders.push(req.headers);
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#accept(ws));
  }

  /** A stalled connection reads nothing (pings go unanswered) and notifies nothing. */
  #stall(conn: Connection, stall: boolean): void {
    if (conn.stalled === stall) return;
    conn.stalled = stall;
    if (stall) conn.socket.pause();
    else conn.socket.resume();
  }

  #accept(socket: WebSocket): void {
    const conn: Connection = { socket, subs: new Map(), stalled: false };
    this.#stall(conn, this.#fault.kind === 'stall');
    this.#connections.add(conn);
    this.#stats.connections++;
    this.#stats.accepted++;
    socket.on('ping', (data: Buffer) => {
      if (!conn.stalled) socket.pong(data);
    });
    socket.on('message', (data: Buffer) => {
      if (!conn.stalled) this.#onMessage(conn, data);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.#connections.delete(conn);
      this.#stats.connections--;
      this.#stats.subscriptions -= conn.subs.size;
      conn.subs.clear();
      this.#listenIfNeeded();
    });
  }

  #send(conn: Connection, text: string): void {
    if (!conn.stalled && conn.socket.readyState === conn.socket.OPEN) conn.socket.send(text);
  }

  #onMessage(conn: Connection, data: Buffer): void {
    let call: unknown;
    try {
      call = JSON.parse(data.toString('utf8'));
    } catch {
      return this.#send(conn, failure(null, -32700, 'Parse error'));
    }
    const method =
      typeof call === 'object' && call !== null ? (call as { method?: unknown }).method : undefined;
    const { id, params } = (call ?? {}) as { id?: unknown; params?: unknown };
    if (typeof method === 'string' && !Array.isArray(call)) {
      const solana = SOLANA_SUBSCRIBE.get(method);
      if (solana) return this.#subscribe(conn, id, method, solana.kind, solana.notify, params);
      if (method === 'eth_subscribe') {
        const kind = EVM_KINDS.get(String(paramAt(params, 0)));
        if (kind) return this.#subscribe(conn, id, method, kind, '', params);
        return this.#send(
          conn,
          failure(id, -32602, `no "${String(paramAt(params, 0))}" subscription in eth namespace`),
        );
      }
      if (SOLANA_UNSUBSCRIBE.has(method) || method === 'eth_unsubscribe')
        return this.#unsubscribe(conn, id, method, params);
      if (method === 'ping' && !('id' in (call as object))) return;
    }
    this.#stats.requests++;
    const body = this.responder().answer(parseBody(data), 0);
    const text = typeof body === 'string' ? body : body.map(String).join('');
    if (text !== '') this.#send(conn, text);
  }

  #subscribe(
    conn: Connection,
    id: unknown,
    method: string,
    kind: MockSubscription['kind'],
    notify: string,
    params: unknown,
  ): void {
    const fault = this.#fault;
    if (fault.kind === 'refuse_subscribe') {
      return this.#send(
        conn,
        failure(id, fault.code ?? REFUSED.code, fault.message ?? REFUSED.message),
      );
    }
    const problem = paramProblem(kind, params);
    if (problem !== undefined) return this.#send(conn, failure(id, -32602, problem));
    const evm = method === 'eth_subscribe';
    let subId: number | string;
    if (evm) {
      subId = `0x${randomBytes(16).toString('hex')}`;
    } else {
      const key = `${method}:${JSON.stringify(params ?? null)}`;
      subId = this.#solanaIds.get(key) ?? ++this.#nextSolanaId;
      this.#solanaIds.set(key, subId);
    }
    const key = String(subId);
    if (!conn.subs.has(key)) this.#stats.subscriptions++;
    conn.subs.set(key, { id: subId, kind, params, notify });
    const name = evm ? `eth_subscribe:${String(paramAt(params, 0))}` : method;
    this.#stats.subscribes[name] = (this.#stats.subscribes[name] ?? 0) + 1;
    this.#send(conn, answer(id, JSON.stringify(subId)));
    this.#listenIfNeeded();
    if (kind === 'signature') {
      const signature = String(paramAt(params, 0));
      const owed = signatureOnSubscribe(
        this.chain.statusOf('solana', signature),
        params,
        this.chain.slot(),
      );
      if (owed) this.#notify(conn, conn.subs.get(key)!, owed.result, owed.done);
    }
  }

  #unsubscribe(conn: Connection, id: unknown, method: string, params: unknown): void {
    const target = paramAt(params, 0);
    const key = String(target);
    if (!conn.subs.delete(key)) {
      return method === 'eth_unsubscribe'
        ? this.#send(conn, failure(id, -32000, 'subscription not found'))
        : this.#send(conn, failure(id, -32602, 'Invalid subscription id.'));
    }
    this.#stats.subscriptions--;
    this.#stats.unsubscribes++;
    this.#send(conn, answer(id, 'true'));
    this.#listenIfNeeded();
  }

  #notify(
    conn: Connection,
    sub: MockSubscription & { readonly id: number | string },
    result: string,
    done: boolean,
  ): void {
    const text =
      typeof sub.id === 'number'
        ? solanaNotification(sub.notify, result, sub.id)
        : evmNotification(sub.id, result);
    this.#stats.notifications++;
    this.#send(conn, text);
    if (done && conn.subs.delete(String(sub.id))) this.#stats.subscriptions--;
  }

  /** The chain is listened to only while some connection has a subscription. */
  #listenIfNeeded(): void {
    const wanted = this.#stats.subscriptions > 0;
    if (wanted && this.#unlisten === undefined) {
      this.#unlisten = this.chain.listen((event) => this.#onChain(event));
    } else if (!wanted && this.#unlisten !== undefined) {
      this.#unlisten();
      this.#unlisten = undefined;
    }
  }

  #onChain(event: ChainEvent): void {
    for (const conn of this.#connections) {
      if (conn.stalled) continue;
      for (const sub of [...conn.subs.values()]) {
        const { results, done } = resultsFor(sub, event, this.chain);
        for (const result of results) this.#notify(conn, sub, result, done);
      }
    }
    this.#listenIfNeeded();
  }
}
