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
import { LocalUsageLedger } from './quota/usage-ledger.js';
import { applyReload, type ReloadOutcome } from './service-reload.js';
import type { WsTuning } from './ws/gateway-context.js';
import { WsGateway } from './ws/ws-gateway.js';

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
  /** The WebSocket side: upgrades on the main port (and on `ws_port` when set). */
  readonly ws: WsGateway;
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
function thresholdWatcher(
  server: ProxyServer,
  ledger: LocalUsageLedger,
  logger: Logger,
): () => void {
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
  ledger: LocalUsageLedger,
  flusher: QuotaFlusher,
  logger: Logger,
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
  ledger: LocalUsageLedger,
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

/** Starts the WebSocket side on the proxy's listener (and `ws_port`), fed to /metrics. */
async function startWs(options: CascadeOptions, server: ProxyServer): Promise<WsGateway> {
  const { listener, route } = server.upgradeTarget;
  const ws = await WsGateway.start({
    listener,
    route,
    registry: options.registry,
    logger: options.logger,
    server: server.config.server,
    host: options.host ?? server.config.server.host,
    tuning: options.wsTuning,
  });
  server.metrics.setWsSource?.(() => ws.snapshot());
  return ws;
}

/** Logs one line per node (URLs redacted) and where the service listens. */
function logStartup(options: CascadeOptions, server: ProxyServer, ws: WsGateway): void {
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
  const bare = host.includes(':') ? `[${host}]` : host;
  const url = `http://${bare}:${server.port}`;
  const fields = {
    url,
    ws: [
      `ws://${bare}:${server.port}`,
      ...(ws.port === undefined ? [] : [`ws://${bare}:${ws.port}`]),
    ],
    nodes: server.nodes().length,
    metrics: server.config.server.enableMetrics,
    quotas: options.quotasPath,
  };
  options.logger.info(fields, options.description ?? 'cascade serving');
}

/** Starts cascade: restores usage, listens, claims the quotas file, starts the timers. */
export async function startCascade(options: CascadeOptions): Promise<Cascade> {
  const { config, logger, quotasPath } = options;
  const ledger = new LocalUsageLedger();
  let server: ProxyServer | undefined;
  let admin: AdminServer | undefined;
  let ws: WsGateway | undefined;
  const flusher = new QuotaFlusher({
    ledger,
    path: quotasPath,
    nodes: () => server?.nodes() ?? config.nodes,
  });
  try {
    logRollover(logger, (await flusher.restore()).events);
    server = await ProxyServer.start({
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
    ws = await startWs(options, server);
    admin = await startAdmin(server, ledger, flusher, logger);
    acquireServerLock(quotasPath, admin?.port ?? null);
  } catch (err) {
    await admin?.close();
    await ws?.close();
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
  const stopTimers = startTimers(options, running, ledger, flusher);
  logStartup(options, running, gateway);
  let closing: Promise<ShutdownSummary> | undefined;

  const close = async (): Promise<ShutdownSummary> => {
    stopTimers();
    await admin?.close();
    // Upgraded sockets keep the HTTP listener from closing: clients get 1012 first.
    await gateway.close();
    await running.close();
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
    ws: gateway,
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
