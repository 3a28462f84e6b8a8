/**
 * cascade as one running service: the proxy, its usage ledger and quotas.json, the lock that
 * keeps the file to one server, the admin listener, the timers (flush, threshold watch, lock
 * heartbeat), reload, and the shutdown order. `cascade serve` is flag handling and logging
 * around `startCascade`; tests and embedders start the same service.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config, LoadResult } from './config/types.js';
import { StartupError } from './errors.js';
import type { AdminServer } from './http/admin-server.js';
import { ProxyServer } from './http/server.js';
import type { ProxyMetrics } from './metrics.js';
import type { MethodRegistry } from './protocol/method-registry.js';
import { QuotaFlusher } from './quota/quota-flusher.js';
import type { RolloverEvent } from './quota/rollover.js';
import { acquireServerLock } from './quota/server-lock.js';
import { SharedUsageLedger } from './quota/shared-usage-ledger.js';
import { LocalUsageLedger } from './quota/usage-ledger.js';
import type { RedisCoordinator } from './cluster/redis-coordinator.js';
import { topologyTarget } from './cluster/topology-target.js';
import { MONOTONIC_CLOCK } from './clock.js';
import { applyReload, type ReloadOutcome } from './service-reload.js';
import { handleStatusRoute } from './admin/admin-routes.js';
import { LocalOperator } from './admin/local-operator.js';
import {
  finalUsageWrite,
  joinFleet,
  statusOnMetricsPort,
  logNodes,
  logRollover,
  startAdmin,
  startTimers,
  startWs,
  wsUrls,
} from './service-parts.js';
import type { WsTuning } from './ws/gateway-context.js';
import type { WsGateway } from './ws/ws-gateway.js';

/** How to start cascade. */
export interface CascadeOptions {
  readonly config: Config;
  readonly registry: MethodRegistry;
  readonly logger: Logger;
  readonly version: string;
  /** Absolute path of quotas.json. */
  readonly quotasPath: string;
  /** Re-reads the config for a reload; absent: reloads are refused (the demo has no file). */
  readonly reloadSource?: () => LoadResult;
  /** Override server.host / server.port (CLI flags). */
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly accessLog?: boolean | undefined;
  /** The startup log line (default 'cascade serving'). */
  readonly description?: string;
  readonly clock?: Clock;
  readonly metrics?: ProxyMetrics;
  /** Shorter WebSocket keep-alive and failover timings (tests). */
  readonly wsTuning?: Partial<WsTuning>;
}

/** What a stopped service leaves behind, for the shutdown summary. */
export interface ShutdownSummary {
  /** 0, or 1 when the final quotas.json write failed. */
  readonly code: 0 | 1;
  readonly requests: ReturnType<ProxyServer['requestCounts']>;
  /** Credits booked this period, per node. */
  readonly usage: Record<string, number>;
}

/** A running cascade. */
export interface Cascade {
  readonly server: ProxyServer;
  /** The bound admin port, when `server.admin_port` is set. */
  readonly adminPort: number | undefined;
  readonly quotasPath: string;
  /** The WebSocket side: upgrades on the main port (and on `ws_port` when set). */
  readonly ws: WsGateway;
  /** Re-reads the config and every price list, all or nothing; logs and returns the result. */
  reload(): ReloadOutcome;
  /** Drains, writes usage once, releases the lock. Calling it again returns the same promise. */
  close(): Promise<ShutdownSummary>;
}

/** The startup line's word on the cache: what is on, and its bound. */
function cacheSummary(cache: Config['cache']): string {
  if (cache === undefined) return 'coalescing only';
  const coalescing = cache.coalesce ? ' + coalescing' : '';
  if (!cache.enabled) return cache.coalesce ? 'coalescing only' : 'off';
  return `${Math.round(cache.maxBytes / 1048576)} MiB${coalescing}`;
}

/** Logs one line per node (URLs redacted) and where the service listens. */
function logStartup(options: CascadeOptions, server: ProxyServer, ws: WsGateway): void {
  logNodes(server.nodes(), options.logger);
  const host = options.host ?? server.config.server.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  const fields = {
    url,
    ws: wsUrls(host, server.port, ws.port),
    nodes: server.nodes().length,
    metrics: server.config.server.enableMetrics,
    quotas: options.quotasPath,
    cache: cacheSummary(server.config.cache),
  };
  options.logger.info(fields, options.description ?? 'cascade serving');
}

/** Starts cascade: restores usage, listens, claims the quotas file, starts the timers. */
export async function startCascade(options: CascadeOptions): Promise<Cascade> {
  const { config, logger, quotasPath } = options;
  const clock = options.clock ?? MONOTONIC_CLOCK;
  const shared = config.cluster?.redisUrl !== undefined;
  const ledger = shared ? new SharedUsageLedger() : new LocalUsageLedger();
  let server: ProxyServer | undefined;
  let admin: AdminServer | undefined;
  let coordinator: RedisCoordinator | undefined;
  let ws: WsGateway | undefined;
  let operator: LocalOperator | undefined;
  let reload: () => ReloadOutcome = () => ({ ok: false, problems: ['still starting'] });
  const flusher = new QuotaFlusher({
    ledger,
    path: quotasPath,
    nodes: () => server?.nodes() ?? config.nodes,
    now: () => new Date(clock.wallNow()),
  });
  try {
    logRollover(logger, (await flusher.restore()).events);
    server = ProxyServer.create({
      config,
      registry: options.registry,
      logger,
      usage: ledger,
      version: options.version,
      host: options.host,
      port: options.port,
      accessLog: options.accessLog,
      clock: options.clock,
      metrics: options.metrics,
      onNodeHealth: (name, seconds) => operator?.nodeHealth(name, seconds),
      metricsRoutes: (req, res, path) =>
        statusOnMetricsPort(config) &&
        operator !== undefined &&
        handleStatusRoute(req, res, path, operator, logger),
    });
    if (config.server.adminPort !== undefined || statusOnMetricsPort(config))
      operator = new LocalOperator(server.topology, clock, logger, () => reload());
    if (shared) {
      const onRollover = (events: readonly RolloverEvent[]) => logRollover(logger, events);
      const target = topologyTarget(server.topology, ledger, clock, onRollover);
      coordinator = await joinFleet(
        config.cluster,
        target,
        ledger as SharedUsageLedger,
        clock,
        logger,
      );
      const joined = coordinator;
      server.metrics.setClusterSource(() => joined.sample());
    }
    await server.listen();
    ws = await startWs(server, options);
    const nodes = server.nodes.bind(server);
    admin = await startAdmin(
      config.server.adminPort,
      nodes,
      ledger,
      flusher,
      logger,
      coordinator,
      operator,
      { host: config.server.adminHost, token: config.server.adminToken },
    );
    acquireServerLock(quotasPath, admin?.port ?? null);
  } catch (err) {
    operator?.stop();
    await admin?.close();
    await ws?.close();
    await coordinator?.stop();
    await server?.close(0);
    if (err instanceof Error && !(err instanceof StartupError) && server) {
      throw new StartupError(
        `cannot claim ${quotasPath}: ${err.message}`,
        'make sure its directory exists and is writable',
      );
    }
    throw err;
  }
  const running = server;
  const gateway = ws;
  const stopTimers = startTimers({
    logger,
    quotasPath,
    flushSeconds: config.server.quotaFlushSeconds,
    nodes: () => running.nodes(),
    ledger,
    flusher,
  });
  logStartup(options, running, gateway);
  let closing: Promise<ShutdownSummary> | undefined;

  const close = async (): Promise<ShutdownSummary> => {
    stopTimers();
    operator?.stop();
    await admin?.close();
    // Upgraded sockets keep the HTTP listener from closing: clients get 1012 first.
    await gateway.close();
    await running.close();
    // Sends what the last requests booked before the final write keeps the rest as unsent.
    await coordinator?.stop();
    const { code, usage } = await finalUsageWrite(flusher, ledger, quotasPath, logger);
    return { code, requests: running.requestCounts(), usage };
  };

  reload = () => {
    if (closing === undefined) return applyReload(running, flusher, logger, options.reloadSource);
    logger.warn('shutting down; reload ignored');
    return { ok: false, problems: ['shutting down; reload ignored'] };
  };
  return {
    server: running,
    adminPort: admin?.port,
    quotasPath,
    ws: gateway,
    reload: () => reload(),
    close: () => (closing ??= close()),
  };
}
