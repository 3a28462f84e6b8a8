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
import { startAdminServer, type AdminServer } from './http/admin-server.js';
import { ProxyServer } from './http/server.js';
import type { ProxyMetrics } from './metrics.js';
import type { MethodRegistry } from './protocol/method-registry.js';
import { QuotaFlusher } from './quota/quota-flusher.js';
import { quotaReport } from './quota/quota-report.js';
import type { RolloverEvent } from './quota/rollover.js';
import {
  HEARTBEAT_MS,
  acquireServerLock,
  refreshServerLock,
  releaseServerLock,
} from './quota/server-lock.js';
import { SharedUsageLedger } from './quota/shared-usage-ledger.js';
import { LocalUsageLedger, type UsageLedger } from './quota/usage-ledger.js';
import { RedisCoordinator } from './cluster/redis-coordinator.js';
import { RedisStore } from './cluster/redis-store.js';
import { topologyTarget } from './cluster/topology-target.js';
import { MONOTONIC_CLOCK } from './clock.js';
import { applyReload, type ReloadOutcome } from './service-reload.js';

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
  /** Re-reads the config and every price list, all or nothing; logs and returns the result. */
  reload(): ReloadOutcome;
  /** Drains, writes usage once, releases the lock. Calling it again returns the same promise. */
  close(): Promise<ShutdownSummary>;
}

/** Logs billing-period resets (startup and flush ticks). */
function logRollover(logger: Logger, events: readonly RolloverEvent[]): void {
  for (const event of events) {
    if (event.kind !== 'reset') continue;
    const fields = {
      node: event.name,
      from: event.from,
      to: event.to,
      used_before: event.usedBefore,
    };
    if (event.longGap)
      logger.warn(fields, `billing period reset after ${event.gapDays} days without a flush`);
    else logger.info(fields, 'billing period reset');
  }
}

/** Logs each node the first time its usage passes its spillover threshold in a period. */
function thresholdWatcher(server: ProxyServer, ledger: UsageLedger, logger: Logger): () => void {
  const over = new Set<string>();
  return () => {
    for (const node of server.nodes()) {
      const used = ledger.counter(node.name).used;
      if (used > node.spilloverThreshold && !over.has(node.name)) {
        over.add(node.name);
        logger.warn(
          { node: node.name, used, threshold: node.spilloverThreshold },
          'quota threshold crossed; traffic spills to the next node',
        );
      } else if (used <= node.spilloverThreshold) {
        over.delete(node.name);
      }
    }
  };
}

async function startAdmin(
  server: ProxyServer,
  ledger: UsageLedger,
  flusher: QuotaFlusher,
  logger: Logger,
  coordinator: RedisCoordinator | undefined,
): Promise<AdminServer | undefined> {
  const port = server.config.server.adminPort;
  if (port === undefined) return undefined;
  const report = () =>
    quotaReport(
      server.nodes(),
      (name) => ({ used: ledger.counter(name).used, periodStart: ledger.periodStart(name) }),
      new Date(),
    );
  const admin = await startAdminServer(
    port,
    {
      report,
      nodeNames: () => server.nodes().map((node) => node.name),
      async reset(names) {
        // With replicas, the fleet's usage is reset in Redis; each replica sees it next sync.
        await coordinator?.reset(names);
        for (const name of names) ledger.reset(name);
        const { error } = await flusher.tick();
        if (error) throw error;
        return report();
      },
    },
    logger,
  );
  logger.info(
    { url: `http://127.0.0.1:${admin.port}/admin/quota` },
    'admin listener (loopback only)',
  );
  return admin;
}

/** Timers that keep running while the service serves; stopped at shutdown. */
function startTimers(
  options: CascadeOptions,
  server: ProxyServer,
  ledger: UsageLedger,
  flusher: QuotaFlusher,
): () => void {
  const { logger, quotasPath } = options;
  // Threshold crossings are checked every second: a flush period (60 s) is too late to hear of it.
  const threshold = setInterval(thresholdWatcher(server, ledger, logger), 1000);
  const flush = setInterval(() => {
    void flusher.tick().then(({ events, error }) => {
      logRollover(logger, events);
      if (error)
        logger.error(
          { err: error.message, file: quotasPath },
          'quota flush failed; retrying at the next tick',
        );
    });
  }, server.config.server.quotaFlushSeconds * 1000);
  let lost = false;
  const heartbeat = setInterval(() => {
    const held = refreshServerLock(quotasPath);
    if (!held && !lost)
      logger.error(
        { file: quotasPath },
        'the quotas lock was taken over by another server; two servers may now share this usage file',
      );
    lost = !held;
  }, HEARTBEAT_MS);
  for (const timer of [threshold, flush, heartbeat]) timer.unref();
  return () => {
    for (const timer of [threshold, flush, heartbeat]) clearInterval(timer);
  };
}

/** Logs one line per node (URLs redacted) and where the service listens. */
function logStartup(options: CascadeOptions, server: ProxyServer): void {
  const limit = (value: number) => (value === Infinity ? null : value);
  for (const node of server.nodes()) {
    options.logger.info(
      {
        node: node.name,
        tier: node.tier,
        rps_limit: limit(node.rpsLimit),
        max_concurrent: limit(node.maxConcurrent),
        monthly_limit: node.monthlyLimit ?? 'unmetered',
        url: node.redactedUrl,
      },
      'node',
    );
  }
  const host = options.host ?? server.config.server.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  const fields = {
    url,
    nodes: server.nodes().length,
    metrics: server.config.server.enableMetrics,
    quotas: options.quotasPath,
  };
  options.logger.info(fields, options.description ?? 'cascade serving');
}

/**
 * Joins the fleet through Redis: this replica's shares of every limit, and the fleet's usage.
 * Resolves once it has its shares (or, Redis unreachable, its fallback shares).
 */
async function coordinate(
  options: CascadeOptions,
  server: ProxyServer,
  ledger: SharedUsageLedger,
  clock: Clock,
): Promise<RedisCoordinator> {
  const cluster = options.config.cluster!;
  const { logger } = options;
  let lastError = '';
  const store = await RedisStore.connect(cluster, (err) => {
    // One line per distinct error, not one per reconnect attempt.
    if (err.message === lastError) return;
    lastError = err.message;
    logger.warn({ err: err.message, redis: cluster.redactedRedisUrl }, 'cluster: Redis error');
  });
  const target = topologyTarget(server.topology, ledger, clock, (events) =>
    logRollover(logger, events),
  );
  const coordinator = new RedisCoordinator(store, cluster, target, ledger, clock, logger);
  await coordinator.start();
  server.metrics.setClusterSource(() => coordinator.sample());
  logger.info(
    { redis: cluster.redactedRedisUrl, replica: cluster.replicaId, prefix: cluster.keyPrefix },
    'cluster: sharing limits and usage with the replicas in Redis',
  );
  return coordinator;
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
    });
    if (shared) coordinator = await coordinate(options, server, ledger as SharedUsageLedger, clock);
    await server.listen();
    admin = await startAdmin(server, ledger, flusher, logger, coordinator);
    acquireServerLock(quotasPath, admin?.port ?? null);
  } catch (err) {
    await admin?.close();
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
  const stopTimers = startTimers(options, running, ledger, flusher);
  logStartup(options, running);
  let closing: Promise<ShutdownSummary> | undefined;

  const close = async (): Promise<ShutdownSummary> => {
    stopTimers();
    await admin?.close();
    await running.close();
    // Sends what the last requests booked before the final write keeps the rest as unsent.
    await coordinator?.stop();
    let code: 0 | 1 = 0;
    try {
      await flusher.close();
    } catch (err) {
      logger.error({ err: (err as Error).message, file: quotasPath }, 'final quota write failed');
      code = 1;
    }
    releaseServerLock(quotasPath);
    const usage = Object.fromEntries(
      [...ledger.snapshot()].map(([name, entry]) => [name, entry.used]),
    );
    return { code, requests: running.requestCounts(), usage };
  };

  return {
    server: running,
    adminPort: admin?.port,
    quotasPath,
    reload: () => {
      if (closing === undefined) return applyReload(running, flusher, logger, options.reloadSource);
      logger.warn('shutting down; reload ignored');
      return { ok: false, problems: ['shutting down; reload ignored'] };
    },
    close: () => (closing ??= close()),
  };
}
