/**
 * cascade as one running service: the proxy, its usage ledger and quotas.json, the lock that
 * keeps the file to one server, the admin listener, the timers (flush, threshold watch, lock
 * heartbeat), reload, and the shutdown order. `cascade serve` is flag handling and logging
 * around `startCascade`; tests and embedders start the same service.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { MONOTONIC_CLOCK } from './clock.js';
import { accountEntries } from './config/config-chains.js';
import { ResetNotApplied } from './errors.js';
import type { Config, LoadResult } from './config/types.js';
import { handleStatusRoute } from './admin/admin-routes.js';
import { LocalOperator } from './admin/local-operator.js';
import type { RedisCoordinator } from './cluster/redis-coordinator.js';
import { keyOverrideSync } from './cluster/key-override-sync.js';
import { topologyTarget } from './cluster/topology-target.js';
import type { AdminServer } from './http/admin-server.js';
import { hostPort } from './http/listen.js';
import { ProxyServer } from './http/server.js';
import { keyChangesPath, readKeyChanges } from './keys/key-changes-file.js';
import { KeyChangesStore } from './keys/key-changes-store.js';
import { keyPeriods } from './keys/key-periods.js';
import type { ProxyMetrics } from './metrics.js';
import type { MethodRegistry } from './protocol/method-registry.js';
import type { RolloverEvent } from './quota/rollover.js';
import { startAdminSurface, statusOnMetricsPort, wantsOperator } from './service-admin.js';
import { fleetKeyLink, linkFleet } from './service-fleet.js';
import { logNodes, logRollover } from './service-logs.js';
import { applyReload, reloadWhileClosing, type ReloadOutcome } from './service-reload.js';
import { UsageStore, startFailure } from './service-usage.js';
import { startWs, wsUrls } from './service-ws.js';
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
  const url = `http://${hostPort(host, server.port)}`;
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

/**
 * Starts cascade: restores usage, listens, claims the quotas file, starts the timers. The
 * parts — usage store, fleet link, admin surface — are the ones the primary of `--workers`
 * assembles too (service-primary.ts); here the proxy serves in this process.
 */
export async function startCascade(options: CascadeOptions): Promise<Cascade> {
  const { config, logger, quotasPath } = options;
  const clock = options.clock ?? MONOTONIC_CLOCK;
  let server: ProxyServer | undefined;
  let admin: AdminServer | undefined;
  let coordinator: RedisCoordinator | undefined;
  let ws: WsGateway | undefined;
  let operator: LocalOperator | undefined;
  let reload: () => ReloadOutcome = () => ({ ok: false, problems: ['still starting'] });
  const nodes = () => server?.nodes() ?? config.nodes;
  // Provider accounts' pools are metered beside the nodes (periods, quotas.json, thresholds).
  const metered = () => [...nodes(), ...accountEntries(server?.config ?? config)];
  // With replicas on Redis, client keys' usage is more counters in the shared ledger.
  const keysShared = config.cluster?.redisUrl !== undefined;
  const counted = () =>
    keyPeriods(server?.keys.list().map((state) => state.config) ?? config.keys?.keys ?? []);
  const usage = await UsageStore.open({
    config,
    quotasPath,
    nodes: metered,
    ...(keysShared ? { counted } : {}),
    clock,
    logger,
  });
  // The operator's revokes and budgets from before a restart, in force before the first request.
  const changesPath = keyChangesPath(quotasPath);
  const savedChanges = await readKeyChanges(changesPath);
  let keyChanges: KeyChangesStore | undefined;
  try {
    server = ProxyServer.create({
      config,
      registry: options.registry,
      logger,
      usage: usage.ledger,
      version: options.version,
      host: options.host,
      port: options.port,
      accessLog: options.accessLog,
      clock: options.clock,
      metrics: options.metrics,
      onNodeHealth: (name, seconds) => operator?.nodeHealth(name, seconds),
      metricsRoutes: (req, res, path) =>
        statusOnMetricsPort(config.server) &&
        operator !== undefined &&
        handleStatusRoute(req, res, path, operator, logger),
    });
    const proxy = server;
    // Client keys' usage sits in quotas.json beside the nodes' (written by the same flusher);
    // shared with replicas, it is the shared ledger's, synced and healed as the nodes' is.
    const shared = usage.shared;
    if (shared !== undefined)
      proxy.keys.shareUsage(shared, async (name) => {
        if (coordinator === undefined)
          throw new ResetNotApplied(new Error('not linked to the fleet yet'));
        await coordinator.reset([name]);
        // Zero here too, as the primary does: the answer shows the reset, not the last sync.
        shared.reset(name);
      });
    proxy.keys.restoreUsage(usage.flusher.others);
    const changes = KeyChangesStore.restore(changesPath, proxy.keys, savedChanges);
    keyChanges = changes;
    usage.flusher.attach(() => proxy.keys.usageSnapshot());
    if (wantsOperator(config.server))
      operator = new LocalOperator(
        proxy.topology,
        clock,
        logger,
        () => reload(),
        () => proxy.config,
      );
    const onRollover = (events: readonly RolloverEvent[]) => logRollover(logger, events);
    coordinator = await linkFleet(
      usage,
      config.cluster,
      () =>
        topologyTarget(
          proxy.topology,
          () => accountEntries(proxy.config),
          usage.ledger,
          clock,
          onRollover,
          keysShared ? counted : undefined,
          proxy.keys,
        ),
      clock,
      logger,
      keyOverrideSync(proxy.keys, logger, undefined, () => changes.saveInBackground(logger)),
    );
    const joined = coordinator;
    if (joined) proxy.metrics.setClusterSource(() => joined.sample());
    await proxy.listen();
    ws = await startWs(proxy, options);
    admin = await startAdminSurface({
      server: config.server,
      nodes,
      accounts: () => proxy.config.accounts ?? [],
      usage,
      coordinator,
      operator,
      logger,
      keys: {
        keys: proxy.keys,
        fleet: fleetKeyLink(() => coordinator, config.cluster),
        persist: () => changes.saveNow(logger),
      },
    });
    usage.claim(admin?.port);
  } catch (err) {
    operator?.stop();
    await admin?.close();
    await ws?.close();
    await coordinator?.stop();
    await server?.close(0);
    // A proxy that could not even be built failed for its own reasons, not the quotas file.
    throw server ? startFailure(err, quotasPath) : err;
  }
  const running = server;
  const gateway = ws;
  const changesKept = keyChanges;
  const stopTimers = usage.startTimers();
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
    await changesKept.close(logger);
    const { code, usage: used } = await usage.close();
    return { code, requests: running.requestCounts(), usage: used };
  };

  const target = {
    running: () => running.config,
    apply: (next: Config) => void running.reload(next),
    flusher: usage.flusher,
  };
  reload = () =>
    closing === undefined
      ? applyReload(target, logger, options.reloadSource)
      : reloadWhileClosing(logger);
  return {
    server: running,
    adminPort: admin?.port,
    quotasPath,
    ws: gateway,
    reload: () => reload(),
    close: () => (closing ??= close()),
  };
}
