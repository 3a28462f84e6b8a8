/**
 * cascade's WebSocket side: upgrades on the proxy's own port and paths (`/`, `/send-request`)
 * and, with `[server] ws_port`, on a second listener that takes only upgrades (so
 * @solana/web3.js, which looks at port + 1, needs nothing but the HTTP URL). Each upgrade is
 * checked by the upgrade gate (path, key, origin, per-IP limit) and becomes a ClientSession;
 * subscriptions live in each chain's hub. Nothing here runs on the HTTP request path: the proxy
 * only gains an `upgrade` listener.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { BlockList } from 'node:net';
import type { Logger } from 'pino';
import type { WebSocket } from 'ws';
import type { ServerConfig } from '../config/types.js';
import { forwardHeaders } from '../http/proxy-handler.js';
import type { ClientKeys } from '../keys/client-keys.js';
import type { ServedChain, ServedChains } from '../http/served-chains.js';
import type { KeyedCaller } from '../serving/key-gate.js';
import { listen } from '../http/listen.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { ClientSession } from './client-session.js';
import {
  DEFAULT_WS_TUNING,
  limitsOf,
  type GatewayContext,
  type GatewayCounters,
  type WsTuning,
} from './gateway-context.js';
import { callThroughRouter } from './routed-answer.js';
import { SubscriptionHub } from './subscription-hub.js';
import { UpgradeGate } from './upgrade-gate.js';
import { CLOSE_SERVICE_RESTART } from './upstream-subscriptions.js';
import { wsSnapshot } from './ws-snapshot.js';

/** How to start the WebSocket side. */
export interface WsGatewayOptions {
  /** The proxy's main listener (upgrades are taken on it too). */
  readonly listener: Server;
  /**
   * The chains served: an upgrade on a chain's path gets that chain's routing context and
   * response cache (socket requests are cached and coalesced as HTTP ones are) and its hub.
   */
  readonly chains: ServedChains;
  /** The proxy's tally of requests answered: socket requests count in it as HTTP ones do. */
  readonly counts: Float64Array;
  readonly registry: MethodRegistry;
  readonly logger: Logger;
  readonly server: ServerConfig;
  /** Where the second listener binds (the proxy's host). */
  readonly host: string;
  /** Shorter timings for tests. */
  readonly tuning?: Partial<WsTuning>;
  /** The proxy's client keys: an upgrade presents one as an HTTP request does. */
  readonly keys?: ClientKeys;
  /** Peers whose X-Forwarded-For names the client (per-IP key limits). */
  readonly trustedProxies?: BlockList | undefined;
}

/** One chain's WebSocket side: its sessions' context and its subscription hub. */
interface ChainSockets {
  readonly chain: ServedChain;
  readonly ctx: GatewayContext;
  readonly hub: SubscriptionHub;
  readonly sessions: Set<ClientSession>;
}

/** The running WebSocket side. */
export class WsGateway {
  /** Each served chain's sockets (a chain's subscriptions are shared within it only). */
  readonly #chains = new Map<ServedChain, ChainSockets>();
  readonly #tuning: WsTuning;
  readonly #limits: ReturnType<typeof limitsOf>;
  /** Checks every upgrade, on either listener, before its handshake. */
  readonly #gate: UpgradeGate;
  readonly #sessions = new Set<ClientSession>();
  readonly #counters: GatewayCounters = { slowClientCloses: 0, rejectedUpgrades: new Map() };
  #second: Server | undefined;
  #port: number | undefined;
  #tick: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  /** Takes the gateway off the keys' change listeners. */
  readonly #unlistenKeys: (() => void) | undefined;

  private constructor(private readonly options: WsGatewayOptions) {
    this.#tuning = { ...DEFAULT_WS_TUNING, ...options.tuning };
    const limits = limitsOf(options.server);
    this.#limits = limits;
    this.#syncChains();
    this.#gate = new UpgradeGate({
      chains: options.chains,
      keys: options.keys,
      trustedProxies: options.trustedProxies,
      corsOrigins: options.server.corsOrigins,
      limits,
      counters: this.#counters,
      accept: (ws, ip, req, caller, chain, presented) =>
        this.#accept(ws, ip, req, caller, chain, presented),
    });
    // A reload, rotation, removal or revoke reaches the sockets already open, not only new calls.
    const keys = options.keys;
    this.#unlistenKeys = keys?.onChange(() => this.#recheckKeys(keys));
    this.#tick = setInterval(() => this.#onTick(), this.#tuning.tickMs);
    this.#tick.unref();
  }

  /** Attaches to the proxy's listener and opens `ws_port` when configured. */
  static async start(options: WsGatewayOptions): Promise<WsGateway> {
    const gateway = new WsGateway(options);
    options.listener.on('upgrade', gateway.#gate.onUpgrade);
    const wsPort = options.server.wsPort;
    if (wsPort !== undefined) {
      const second = createServer((_req, res) => {
        res.writeHead(426, { 'content-type': 'application/json', upgrade: 'websocket' });
        res.end(
          '{"error":"this port takes WebSocket connections only (ws://); JSON-RPC over HTTP is on the main port"}',
        );
      });
      second.on('upgrade', gateway.#gate.onUpgrade);
      try {
        gateway.#port = await listen(second, options.host, wsPort, 'WebSocket');
        gateway.#second = second;
      } catch (err) {
        if (options.server.wsPortBestEffort === true) {
          options.logger.warn(
            { port: wsPort, err: (err as Error).message },
            'WebSocket port (port + 1) unavailable; WebSockets are served on the main port only',
          );
          return gateway;
        }
        await gateway.close();
        throw err;
      }
    }
    return gateway;
  }

  /** The bound port of the WebSocket-only listener, if any. */
  get port(): number | undefined {
    return this.#port;
  }

  /** Client sockets open now. */
  get clients(): number {
    return this.#sessions.size;
  }

  /** Map entries held for clients (sessions, per-IP counts): 0 when every client left. */
  entries(): { sessions: number; ips: number } {
    return { sessions: this.#sessions.size, ips: this.#gate.ips };
  }

  /** The subscription hub of the first chain (the only one of a `[[nodes]]` config). */
  get hub(): SubscriptionHub {
    return this.#sockets(this.options.chains.first()).hub;
  }

  /** A chain's subscription hub. */
  hubOf(chain: string): SubscriptionHub | undefined {
    const served = this.options.chains.get(chain);
    return served === undefined ? undefined : this.#chains.get(served)?.hub;
  }

  /** What /metrics shows of the WebSocket side now. */
  snapshot(): ReturnType<typeof wsSnapshot> {
    const parts = [...this.#chains.values()].map(({ hub, chain }) => ({
      hub,
      table: chain.slot.table,
    }));
    return wsSnapshot(this.#sessions.size, this.#counters, parts);
  }

  /** Every open session admitted with a key checks it again; one that no longer passes closes. */
  #recheckKeys(keys: ClientKeys): void {
    for (const { chain, sessions } of this.#chains.values())
      for (const session of sessions) session.recheckKey(keys, chain.name);
  }

  #onTick(): void {
    this.#syncChains();
    for (const sockets of this.#chains.values()) sockets.hub.tick();
  }

  /** Gives every served chain its sockets; a chain no longer served closes its clients. */
  #syncChains(): void {
    const served = new Set(this.options.chains.all());
    for (const chain of served) this.#sockets(chain);
    for (const [chain, sockets] of this.#chains) {
      if (served.has(chain)) continue;
      this.#chains.delete(chain);
      for (const session of sockets.sessions)
        session.close(CLOSE_SERVICE_RESTART, `chain '${chain.name}' is no longer served`);
      sockets.hub.close();
    }
  }

  #sockets(chain: ServedChain): ChainSockets {
    const known = this.#chains.get(chain);
    if (known !== undefined) return known;
    const { registry, logger } = this.options;
    const route = chain.handler.route;
    const hub = new SubscriptionHub({
      route,
      logger,
      timing: this.#tuning,
      call: (method, params) => callThroughRouter(route, registry, method, params),
    });
    const ctx: GatewayContext = {
      route,
      cache: chain.handler.cache,
      registry,
      logger,
      hub,
      limits: this.#limits,
      maxBatchSize: this.options.server.maxBatchSize,
      counters: this.#counters,
      counts: this.options.counts,
    };
    const sockets = { chain, ctx, hub, sessions: new Set<ClientSession>() };
    this.#chains.set(chain, sockets);
    return sockets;
  }

  /** Closes every client with 1012 (service restart) and every upstream socket. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    // Every later upgrade, on either listener, is refused with 503 (shutting_down).
    this.#gate.close();
    this.#unlistenKeys?.();
    clearInterval(this.#tick);
    this.options.listener.off('upgrade', this.#gate.onUpgrade);
    for (const sockets of this.#chains.values()) sockets.hub.close();
    const gone = [...this.#sessions].map(
      (session) =>
        new Promise<void>((resolve) => {
          if (session.socket.readyState === session.socket.CLOSED) return resolve();
          session.socket.once('close', () => resolve());
          session.close(CLOSE_SERVICE_RESTART, 'cascade is restarting');
        }),
    );
    await Promise.all(gone);
    const second = this.#second;
    if (second) {
      second.closeAllConnections();
      await new Promise<void>((resolve) => second.close(() => resolve()));
    }
  }

  #accept(
    ws: WebSocket,
    ip: string,
    req: IncomingMessage,
    caller: KeyedCaller | undefined,
    chain: ServedChain,
    presented: string | undefined,
  ): void {
    // A chain a reload just added gets its sockets now; one it just removed is not served.
    const served = this.options.chains.get(chain.name) === chain;
    const sockets = served ? this.#sockets(chain) : undefined;
    if (this.#closing !== undefined || sockets === undefined) {
      ws.close(CLOSE_SERVICE_RESTART, 'cascade is restarting');
      return;
    }
    const session = new ClientSession(ws, ip, forwardHeaders(req), sockets.ctx, caller, presented);
    this.#sessions.add(session);
    sockets.sessions.add(session);
    ws.once('close', () => {
      this.#sessions.delete(session);
      sockets.sessions.delete(session);
      session.disposed();
    });
    // The keys may have changed between the upgrade's check and the handshake's end.
    const keys = this.options.keys;
    if (caller !== undefined && keys !== undefined) session.recheckKey(keys, chain.name);
  }
}
