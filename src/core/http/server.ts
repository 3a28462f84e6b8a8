import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { MONOTONIC_CLOCK, type Clock } from '../clock.js';
import { chainsOf } from '../config/config-chains.js';
import type { Config, NodeConfig } from '../config/types.js';
import type { ClientKeys } from '../keys/client-keys.js';
import { NOOP_METRICS, type REQUEST_OUTCOMES, type ProxyMetrics } from '../metrics.js';
import { createPromMetrics } from '../prom-metrics.js';
import { DeadlineQueue } from '../node/deadline-queue.js';
import { checkChains } from '../routing/chain-identity.js';
import type { ResponseCache } from '../cache/response-cache.js';
import { Topology, type TopologyDiff } from '../routing/topology.js';
import type { CorsPolicy } from './cors.js';
import { drainServer } from './drain.js';
import { withChainsAndAccounts } from './chain-health.js';
import { healthReport, type HealthReport } from './health.js';
import { HealthTicker } from './health-ticker.js';
import { rememberPeer } from './client-address.js';
import { listen } from './listen.js';
import { listenerOptions } from './listener-options.js';
import { MetricsListener, serveHealth, serveMetrics, setMetricSources } from './monitoring.js';
import { handleProxy, type ProxyHandlerContext } from './proxy-handler.js';
import { answerNoChain } from './no-chain.js';
import { sendStatus } from './respond.js';
import { ServedChains, type SharedHandlerContext } from './served-chains.js';
import { proxyCorsOf, routeContextOf, sharedContextOf } from './server-context.js';
import { sameValue, type ProxyServerOptions } from './server-options.js';
import { pathOf } from './url-path.js';

export type { ProxyServerOptions } from './server-options.js';

const RANK_INTERVAL_MS = 1000;
/** How long shutdown waits for in-flight requests before closing their connections. */
export const DRAIN_TIMEOUT_MS = 10_000;

/** The proxy: HTTP listener(s), topology, ranking loop, graceful shutdown. */
export class ProxyServer {
  readonly topology: Topology;
  readonly metrics: ProxyMetrics;
  readonly #options: ProxyServerOptions;
  readonly #clock: Clock;
  readonly #server: Server;
  /** The loopback listener of `metrics_port`, when configured (and not a worker's). */
  #metricsListener: MetricsListener | undefined;
  /** `metrics_port` is set: /metrics is served there (by this process or the primary), not here. */
  #metricsAway = false;
  /** What every chain's requests share (keys, counts, limits…). */
  readonly #shared: SharedHandlerContext;
  /** The chains served, each with its own routing context and cache. */
  readonly chains: ServedChains;
  /** Undefined when `cors_origins` is empty: no CORS headers, OPTIONS gets 405. */
  readonly #cors: CorsPolicy | undefined;
  /** The proxy paths' policy: `cors_origins` and every key's `origins` (rebuilt on reload). */
  #proxyCors: CorsPolicy | undefined;
  #config: Config;
  #rankTimer: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  readonly #health: HealthTicker;
  #port = 0;

  private constructor(options: ProxyServerOptions) {
    this.#options = options;
    this.#config = options.config;
    this.#clock = options.clock ?? MONOTONIC_CLOCK;
    const server = options.config.server;
    this.metrics =
      options.metrics ??
      (server.enableMetrics ? createPromMetrics({ version: options.version }) : NOOP_METRICS);
    const chains = chainsOf(options.config);
    this.topology = new Topology(
      { nodes: options.config.nodes, chains, accounts: options.config.accounts },
      {
        usage: options.usage,
        metrics: this.metrics,
        clock: this.#clock,
        deadlines: new DeadlineQueue(this.#clock),
      },
    );
    this.#shared = sharedContextOf(options, this.metrics, this.#clock);
    this.chains = new ServedChains(
      this.topology,
      this.#shared,
      routeContextOf(options, this.metrics, this.#clock),
      options.registry,
      options.logger,
    );
    this.chains.apply(chains);
    this.#cors = this.#shared.cors;
    this.#proxyCors = proxyCorsOf(server.corsOrigins, options.config.keys);
    this.#health = new HealthTicker(
      this.topology,
      this.metrics,
      this.#clock,
      options.logger,
      (chain) => this.chains.get(chain)?.config.lag?.expectChain,
    );
    this.#server = createServer(listenerOptions(server.keepAliveTimeoutMs), (req, res) =>
      this.#onRequest(req, res),
    );
    this.#server.on('connection', rememberPeer);
  }

  /** Starts listening; rejects with a StartupError when the port cannot be bound. */
  static async start(options: ProxyServerOptions): Promise<ProxyServer> {
    const proxy = ProxyServer.create(options);
    await proxy.listen();
    return proxy;
  }

  /** Builds the proxy (nodes, metrics) without listening yet: see `listen`. */
  static create(options: ProxyServerOptions): ProxyServer {
    return new ProxyServer(options);
  }

  /** Starts listening; rejects with a StartupError when a port cannot be bound. */
  async listen(): Promise<void> {
    const proxy = this as ProxyServer;
    const options = this.#options;
    const server = options.config.server;
    const host = options.host ?? server.host;
    // Nodes on another chain are found before the first request can reach them.
    await Promise.all(
      proxy.chains
        .all()
        .map((chain) =>
          checkChains(chain.slot.table.all, chain.config.lag?.expectChain, options.logger),
        ),
    );
    proxy.#port = await listen(proxy.#server, host, options.port ?? server.port, 'proxy');
    proxy.#metricsAway = server.enableMetrics && server.metricsPort !== undefined;
    if (proxy.#metricsAway && options.fleetView === undefined) {
      const metricsListener = new MetricsListener(options, proxy.metrics);
      proxy.#metricsListener = metricsListener;
      try {
        await metricsListener.listen(server.metricsPort!);
      } catch (err) {
        await proxy.close(0);
        throw err;
      }
    }
    setMetricSources(proxy.metrics, proxy.topology, proxy.#clock, proxy.#shared.keys);
    proxy.#health.tick();
    proxy.#rankTimer = setInterval(() => proxy.#health.tick(), RANK_INTERVAL_MS);
    proxy.#rankTimer.unref();
  }

  /** Client requests answered so far, by outcome (works with metrics off too). */
  requestCounts(): Record<(typeof REQUEST_OUTCOMES)[number], number> {
    const counts = this.#shared.counts;
    return {
      forwarded: counts[0]!,
      bad_request: counts[1]!,
      bad_gateway: counts[2]!,
      timeout: counts[3]!,
    };
  }

  /** The bound port of the main listener. */
  get port(): number {
    return this.#port;
  }

  /** The bound port of the loopback metrics listener, if any. */
  get metricsPort(): number | undefined {
    return this.#metricsListener?.port;
  }

  /**
   * What the WebSocket side (core/ws) attaches to: the main listener, the chains (each with the
   * routing context and response cache HTTP serves it with: one cache, one set of flights for
   * every door of a chain), and what every chain shares.
   */
  get upgradeTarget(): {
    readonly listener: Server;
    readonly chains: ServedChains;
    readonly counts: Float64Array;
    readonly keys: ClientKeys;
    readonly trustedProxies: ProxyHandlerContext['trustedProxies'];
  } {
    const { counts, keys, trustedProxies } = this.#shared;
    return { listener: this.#server, chains: this.chains, counts, keys, trustedProxies };
  }

  /** The client keys in force (every door of this process checks them). */
  get keys(): ClientKeys {
    return this.#shared.keys;
  }

  get config(): Config {
    return this.#config;
  }

  /** GET /health's document, now. */
  health(): HealthReport {
    const topology = this.topology;
    const report = healthReport(topology.table, this.#clock.now(), (node) =>
      topology.chainOf(node),
    );
    const used = (account: string) => topology.account(account)?.usage.used ?? 0;
    return withChainsAndAccounts(report, this.#config, used, new Date());
  }

  /**
   * Applies a reloaded config's chains, nodes and accounts ([server] changes need a restart
   * and are reported).
   */
  reload(config: Config): { diff: TopologyDiff; serverChanged: string[] } {
    const before = this.#config.server;
    const after = config.server;
    const serverChanged = (Object.keys(before) as Array<keyof typeof before>).filter(
      (key) => !sameValue(before[key], after[key]),
    );
    const chains = chainsOf(config);
    const { diff, retired } = this.topology.apply({
      nodes: config.nodes,
      chains,
      accounts: config.accounts,
    });
    this.chains.apply(chains);
    const added = new Set(diff.added);
    for (const chain of this.chains.all())
      void checkChains(
        chain.slot.table.all.filter((node) => added.has(node.name)),
        chain.config.lag?.expectChain,
        this.#options.logger,
      );
    // Keys apply at once: added ones work, removed ones are refused from the next call.
    const keys = this.#shared.keys;
    keys.reconfigure(config.keys);
    if (keys.enabled) this.metrics.setKeySource?.(() => keys.samples());
    this.#proxyCors = proxyCorsOf(before.corsOrigins, config.keys);
    // [server] and [cluster] apply at startup only.
    this.#config = { ...config, server: before, cluster: this.#config.cluster };
    for (const transport of retired) void transport.close().catch(() => undefined);
    this.#health.tick();
    return { diff, serverChanged };
  }

  /** The response cache and coalescer of the first chain (the only one of a `[[nodes]]` config). */
  get cache(): ResponseCache | undefined {
    return this.chains.first().handler.cache;
  }

  /** The node configs now in force (config order). */
  nodes(): readonly NodeConfig[] {
    return this.topology.table.all.map((node) => node.config);
  }

  /**
   * Stops accepting, lets in-flight requests finish (up to `drainMs`), then closes. Requests
   * still running after that lose their connections, and their upstream attempts are aborted
   * rather than awaited. Calling it again returns the same promise.
   */
  close(drainMs = DRAIN_TIMEOUT_MS): Promise<void> {
    this.#closing ??= this.#close(drainMs);
    return this.#closing;
  }

  async #close(drainMs: number): Promise<void> {
    if (this.#rankTimer) clearInterval(this.#rankTimer);
    this.#shared.drain.active = true;
    const cutOff = await drainServer(this.#server, drainMs);
    if (this.#metricsListener) await this.#metricsListener.close();
    // A graceful pool close would wait for attempts nobody is waiting for any more.
    await (cutOff ? this.topology.destroy() : this.topology.close());
  }

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const path = pathOf(req.url);
    // While draining, answers say `Connection: close` so clients stop reusing the connection.
    if (this.#shared.drain.active) res.shouldKeepAlive = false;
    // Browsers may call the proxy and /health; /metrics and the rest stay same-origin.
    const cors = this.#cors;
    const keysOn = this.#shared.keys.enabled;
    // Read once: each read of the getter costs two megamorphic loads.
    const headers = req.headers;
    const hit = this.chains.resolve(path, headers.host, keysOn, req.socket);
    if (hit !== undefined) {
      const proxyCors = this.#proxyCors;
      const allowed = proxyCors !== undefined && proxyCors.decorate(req, res);
      if (req.method === 'POST') return handleProxy(req, res, hit.target.handler, hit, headers);
      if (proxyCors && req.method === 'OPTIONS')
        return proxyCors.preflight(req, res, allowed, 'POST');
      return sendStatus(res, 405, 'Method Not Allowed', 'POST');
    }
    if (path === '/health') return serveHealth(req, res, cors, this.#options.fleetView, this);
    if (path === '/metrics' && this.#config.server.enableMetrics && !this.#metricsAway) {
      return serveMetrics(req, res, this.metrics, this.#options.fleetView, this.#options.logger);
    }
    if (this.#options.extraRoutes?.(req, res, path)) return;
    if (this.#config.chains !== undefined) return this.#noChain(req, res, path);
    sendStatus(res, 404, 'Not Found');
  }

  /** A path no chain serves, with `[[chains]]` (http/no-chain.ts). */
  #noChain(req: IncomingMessage, res: ServerResponse, path: string): void {
    const chains = this.chains.all();
    const served = chains.map((chain) => `${chain.name}: ${chain.config.paths.join(', ')}`);
    const paths = chains.flatMap((chain) => chain.config.paths);
    const server = this.#config.server;
    answerNoChain(req, res, path, served, paths, server.maxBodyBytes, this.#options.registry);
  }
}
