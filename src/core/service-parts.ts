/** The parts of a running service shared by one process and the primary of several workers. */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { ClusterConfig, Config, NodeConfig } from './config/types.js';
import { handleOperatorRoute } from './admin/admin-routes.js';
import type { Operator } from './admin/operator.js';
import { startAdminServer, type AdminAccess, type AdminServer } from './http/admin-server.js';
import type { QuotaFlusher } from './quota/quota-flusher.js';
import { quotaReport } from './quota/quota-report.js';
import type { RolloverEvent } from './quota/rollover.js';
import { HEARTBEAT_MS, refreshServerLock, releaseServerLock } from './quota/server-lock.js';
import type { SharedUsageLedger } from './quota/shared-usage-ledger.js';
import type { UsageLedger } from './quota/usage-ledger.js';
import { RedisCoordinator, type ShareTarget } from './cluster/redis-coordinator.js';
import { RedisStore } from './cluster/redis-store.js';
import type { ProxyServer } from './http/server.js';
import type { MethodRegistry } from './protocol/method-registry.js';
import type { WsTuning } from './ws/gateway-context.js';
import { WsGateway } from './ws/ws-gateway.js';
import { wsUrlOf } from './ws/ws-url.js';

/**
 * The last step of a shutdown: the final usage write (exit code 1 when it fails, logged), the
 * quotas lock released, and each node's usage for the summary.
 */
export async function finalUsageWrite(
  flusher: QuotaFlusher,
  ledger: UsageLedger,
  quotasPath: string,
  logger: Logger,
): Promise<{ code: 0 | 1; usage: Record<string, number> }> {
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
  return { code, usage };
}

/** The node configs now in force. */
export type NodeList = () => readonly NodeConfig[];

/** The status page is on the loopback metrics port too, unless the admin data needs a token. */
export function statusOnMetricsPort(config: Config): boolean {
  const server = config.server;
  return (
    server.enableMetrics && server.metricsPort !== undefined && server.adminToken === undefined
  );
}

/** Logs billing-period resets (startup and flush ticks). */
export function logRollover(logger: Logger, events: readonly RolloverEvent[]): void {
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
function thresholdWatcher(nodes: NodeList, ledger: UsageLedger, logger: Logger): () => void {
  const over = new Set<string>();
  return () => {
    for (const node of nodes()) {
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

/** Starts the admin listener when `port` is set (usage, resets, the operator's routes). */
export async function startAdmin(
  port: number | undefined,
  nodes: NodeList,
  ledger: UsageLedger,
  flusher: QuotaFlusher,
  logger: Logger,
  coordinator: RedisCoordinator | undefined,
  operator?: Operator,
  access?: AdminAccess,
): Promise<AdminServer | undefined> {
  if (port === undefined) return undefined;
  const report = () =>
    quotaReport(
      nodes(),
      (name) => {
        const counter = ledger.counter(name);
        return { used: counter.used, periodStart: ledger.periodStart(name), saved: counter.saved };
      },
      new Date(),
    );
  const admin = await startAdminServer(
    port,
    {
      report,
      nodeNames: () => nodes().map((node) => node.name),
      async reset(names) {
        // With replicas, the fleet's usage is reset in Redis; each replica sees it next sync.
        await coordinator?.reset(names);
        for (const name of names) ledger.reset(name);
        const { error } = await flusher.tick();
        if (error) throw error;
        return report();
      },
      routes:
        operator &&
        ((req, res, path) =>
          handleOperatorRoute(req, res, path, operator, logger, access?.token !== undefined)),
    },
    logger,
    access,
  );
  const host = access?.host ?? '127.0.0.1';
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${admin.port}`;
  logger.info(
    {
      url: `${base}/admin/nodes`,
      status_page: `${base}/status`,
      token: access?.token !== undefined,
    },
    access?.token === undefined
      ? 'admin listener (loopback only)'
      : 'admin listener (bearer token required)',
  );
  return admin;
}

/** What the service's timers work on. */
export interface TimerContext {
  readonly logger: Logger;
  readonly quotasPath: string;
  readonly flushSeconds: number;
  readonly nodes: NodeList;
  readonly ledger: UsageLedger;
  readonly flusher: QuotaFlusher;
}

/** Timers that keep running while the service serves (flush, threshold, lock heartbeat). */
export function startTimers(ctx: TimerContext): () => void {
  const { logger, quotasPath, flusher } = ctx;
  // Threshold crossings are checked every second: a flush period (60 s) is too late to hear of it.
  const threshold = setInterval(thresholdWatcher(ctx.nodes, ctx.ledger, logger), 1000);
  const flush = setInterval(() => {
    void flusher.tick().then(({ events, error }) => {
      logRollover(logger, events);
      if (error)
        logger.error(
          { err: error.message, file: quotasPath },
          'quota flush failed; retrying at the next tick',
        );
    });
  }, ctx.flushSeconds * 1000);
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

/** Logs one line per node (URLs redacted). */
export function logNodes(nodes: readonly NodeConfig[], logger: Logger): void {
  const limit = (value: number) => (value === Infinity ? null : value);
  for (const node of nodes) {
    logger.info(
      {
        node: node.name,
        tier: node.tier,
        rps_limit: limit(node.rpsLimit),
        max_concurrent: limit(node.maxConcurrent),
        monthly_limit: node.monthlyLimit ?? 'unmetered',
        url: node.redactedUrl,
        ws_url: wsUrlOf(node).redacted,
      },
      'node',
    );
  }
}

/**
 * Joins the fleet through Redis: this replica's shares of every limit (applied to `target`)
 * and the fleet's usage (in `ledger`). Resolves once it has its shares, or — Redis unreachable
 * for the lease — its fallback shares.
 */
export async function joinFleet(
  cluster: ClusterConfig,
  target: ShareTarget,
  ledger: SharedUsageLedger,
  clock: Clock,
  logger: Logger,
): Promise<RedisCoordinator> {
  let lastError = '';
  const store = await RedisStore.connect(cluster, (err) => {
    // One line per distinct error, not one per reconnect attempt.
    if (err.message === lastError) return;
    lastError = err.message;
    logger.warn({ err: err.message, redis: cluster.redactedRedisUrl }, 'cluster: Redis error');
  });
  const coordinator = new RedisCoordinator(store, cluster, target, ledger, clock, logger);
  await coordinator.start();
  logger.info(
    { redis: cluster.redactedRedisUrl, replica: cluster.replicaId, prefix: cluster.keyPrefix },
    'cluster: sharing limits and usage with the replicas in Redis',
  );
  return coordinator;
}

/** Starts the WebSocket side on the proxy's listener (and `ws_port`), fed to /metrics. */
export async function startWs(
  server: ProxyServer,
  options: {
    readonly registry: MethodRegistry;
    readonly logger: Logger;
    readonly host?: string | undefined;
    readonly wsTuning?: Partial<WsTuning> | undefined;
  },
): Promise<WsGateway> {
  const { listener, route, cache } = server.upgradeTarget;
  const ws = await WsGateway.start({
    listener,
    route,
    cache,
    registry: options.registry,
    logger: options.logger,
    server: server.config.server,
    host: options.host ?? server.config.server.host,
    tuning: options.wsTuning,
  });
  server.metrics.setWsSource?.(() => ws.snapshot());
  return ws;
}

/** The WebSocket URLs a startup line names: the main port, and `ws_port` when open. */
export function wsUrls(host: string, port: number, wsPort: number | undefined): string[] {
  const bare = host.includes(':') ? `[${host}]` : host;
  return [`ws://${bare}:${port}`, ...(wsPort === undefined ? [] : [`ws://${bare}:${wsPort}`])];
}
