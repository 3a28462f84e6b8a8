/**
 * The primary of `cascade serve --workers N` (node:cluster): it does not serve requests — its
 * workers do, on one shared port — but it is the one process the rest of the system sees.
 * It owns quotas.json (the workers' usage flows into its ledger), the lock, the admin
 * listener, the Redis coordination when replicas share limits, and the order of things: it
 * restarts a worker that crashed, passes a reload (SIGHUP) on to every worker, and on
 * SIGTERM drains them all before it writes usage once. /health and /metrics asked of any
 * worker are answered here for the whole proxy.
 */
import cluster, { type Worker } from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { AggregatorRegistry, Registry } from 'prom-client';
import { handleStatusRoute } from './admin/admin-routes.js';
import { FleetOperator } from './admin/fleet-operator.js';
import type { NodeView } from './admin/node-view.js';
import { MONOTONIC_CLOCK } from './clock.js';
import type { Config, LoadResult } from './config/types.js';
import { coordinatedNodes } from './cluster/coordinated-nodes.js';
import type { RedisCoordinator } from './cluster/redis-coordinator.js';
import { WorkerHub } from './cluster/worker-hub.js';
import { WorkerAsks } from './cluster/worker-asks.js';
import { StartupError } from './errors.js';
import type { AdminServer } from './http/admin-server.js';
import { fleetHealthReport, type WorkerNodeHealth } from './http/health.js';
import { listen } from './http/listen.js';
import { sendBytes, sendStatus } from './http/respond.js';
import { DRAIN_TIMEOUT_MS } from './http/server.js';
import type { ClusterSample } from './metrics.js';
import { registerClusterGauges } from './prom-cluster-metrics.js';
import { QuotaFlusher } from './quota/quota-flusher.js';
import type { RolloverEvent } from './quota/rollover.js';
import { acquireServerLock } from './quota/server-lock.js';
import { SharedUsageLedger } from './quota/shared-usage-ledger.js';
import { LocalUsageLedger } from './quota/usage-ledger.js';
import { diffNodes } from './routing/topology.js';
import type { ReloadOutcome } from './service-reload.js';
import {
  finalUsageWrite,
  joinFleet,
  logNodes,
  logRollover,
  startAdmin,
  startTimers,
  statusOnMetricsPort,
} from './service-parts.js';
import { WORKER_SYNC_MS, type PrimaryCommand, type WorkerMessage } from './service-worker.js';

/** How to start the primary. */
export interface PrimaryOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly workers: number;
  readonly quotasPath: string;
  readonly reloadSource?: () => LoadResult;
  /** Extra environment for the workers (e.g. the demo's mock node URLs). */
  readonly workerEnv?: Readonly<Record<string, string>>;
  /** The port the workers listen on (the --port flag), for the log. */
  readonly port?: number | undefined;
}

/** What a stopped primary leaves behind. */
export interface PrimarySummary {
  readonly code: 0 | 1;
  readonly usage: Record<string, number>;
}

/** A running primary. */
export interface CascadePrimary {
  readonly quotasPath: string;
  readonly adminPort: number | undefined;
  reload(): ReloadOutcome;
  close(): Promise<PrimarySummary>;
}

/** A worker that keeps crashing is restarted after up to this long. */
const MAX_RESTART_DELAY_MS = 5000;

function tell(worker: Worker, message: PrimaryCommand): void {
  // A worker leaving may close its channel between the check and the write: not an error.
  if (worker.isConnected()) worker.send(message, undefined, undefined, () => undefined);
}

/** Starts the primary and its workers; resolves once the workers are serving. */
export async function startCascadePrimary(options: PrimaryOptions): Promise<CascadePrimary> {
  const { logger, quotasPath } = options;
  const clock = MONOTONIC_CLOCK;
  let config = options.config;
  const ledger =
    config.cluster?.redisUrl !== undefined ? new SharedUsageLedger() : new LocalUsageLedger();
  const flusher = new QuotaFlusher({ ledger, path: quotasPath, nodes: () => config.nodes });
  logRollover(logger, (await flusher.restore()).events);
  const onRollover = (events: readonly RolloverEvent[]) => logRollover(logger, events);
  const hub = new WorkerHub(ledger, () =>
    coordinatedNodes(config.nodes, ledger, clock.wallNow(), onRollover),
  );
  const health = new Map<number, Record<string, WorkerNodeHealth>>();
  let coordinator: RedisCoordinator | undefined;
  let admin: AdminServer | undefined;
  let metricsServer: Server | undefined;
  const registry = new Registry();
  const aggregator = new AggregatorRegistry();
  const renderMetrics = async (): Promise<string> =>
    `${await aggregator.clusterMetrics()}${await registry.metrics()}`;
  let closing = false;
  let crashes = 0;
  const asks = new WorkerAsks();
  const live = (): Worker[] =>
    Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
  const operator = new FleetOperator({
    nodes: () => config.nodes,
    used: (name) => ledger.counter(name).used,
    clock,
    logger,
    reload: () => reload(),
    workerViews: async () =>
      (await asks.ask(live(), (id): PrimaryCommand => ({ t: 'view', id }), tell)) as NodeView[][],
    applyCordons: async (cordoned) => {
      await asks.ask(live(), (id): PrimaryCommand => ({ t: 'cordon', id, cordoned }), tell);
    },
  });

  const fork = (): void => {
    const worker = cluster.fork(options.workerEnv);
    worker.on('error', (err) =>
      logger.debug({ worker: worker.id, err: err.message }, 'worker channel'),
    );
    hub.add(worker.id);
  };
  const onMessage = (worker: Worker, message: WorkerMessage): void => {
    if (message.t === 'sync') {
      health.set(worker.id, message.health);
      operator.penalties(message.penalties);
      tell(worker, { ...hub.sync(worker.id, message), cordoned: operator.cordoned });
    } else if (message.t === 'reply') {
      asks.answer(message.id, message.value);
    } else if (message.t === 'ask') {
      const cordoned = new Set(operator.cordoned);
      const answer =
        message.what === 'health'
          ? Promise.resolve(fleetHealthReport(config.nodes, [...health.values()], cordoned))
          : renderMetrics();
      answer.then(
        (value) => tell(worker, { t: 'answer', id: message.id, value }),
        () => undefined,
      );
    }
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    hub.remove(worker.id);
    health.delete(worker.id);
    if (closing) return;
    crashes++;
    const delay = Math.min(100 * 2 ** Math.min(crashes, 6), MAX_RESTART_DELAY_MS);
    logger.error(
      { worker: worker.id, code, signal, restart_in_ms: delay },
      'worker exited; restarting it',
    );
    setTimeout(() => {
      if (!closing) fork();
    }, delay).unref();
  };

  try {
    if (ledger instanceof SharedUsageLedger) {
      coordinator = await joinFleet(config.cluster!, hub, ledger, clock, logger);
    }
    const sample = coordinator ? () => coordinator!.sample() : localSample(() => config.nodes);
    registerClusterGauges(registry, sample);
    admin = await startAdmin(
      config.server.adminPort,
      () => config.nodes,
      ledger,
      flusher,
      logger,
      coordinator,
      operator,
      { host: config.server.adminHost, token: config.server.adminToken },
    );
    acquireServerLock(quotasPath, admin?.port ?? null);
    if (config.server.enableMetrics && config.server.metricsPort !== undefined) {
      metricsServer = createServer((req, res) => {
        const path = (req.url ?? '/').split('?')[0]!;
        if (path !== '/metrics') {
          const page =
            statusOnMetricsPort(config) && handleStatusRoute(req, res, path, operator, logger);
          return page ? undefined : sendStatus(res, 404, 'Not Found');
        }
        renderMetrics().then(
          (text) => sendBytes(res, 200, registry.contentType, text),
          () => sendStatus(res, 500, 'metrics unavailable'),
        );
      });
      await listen(metricsServer, '127.0.0.1', config.server.metricsPort, 'metrics');
    }
  } catch (err) {
    await admin?.close();
    await coordinator?.stop();
    metricsServer?.close();
    if (err instanceof Error && !(err instanceof StartupError)) {
      throw new StartupError(
        `cannot claim ${quotasPath}: ${err.message}`,
        'make sure its directory exists and is writable',
      );
    }
    throw err;
  }
  cluster.on('message', onMessage);
  cluster.on('exit', onExit);
  const stopTimers = startTimers({
    logger,
    quotasPath,
    flushSeconds: config.server.quotaFlushSeconds,
    nodes: () => config.nodes,
    ledger,
    flusher,
  });
  // One split of every limit between the workers per sync interval (see WorkerHub.tick).
  const split = setInterval(() => hub.tick(), WORKER_SYNC_MS);
  // Reset the crash backoff once workers have run a while.
  const calm = setInterval(() => (crashes = 0), 30_000).unref();
  for (let i = 0; i < options.workers; i++) fork();
  logNodes(config.nodes, logger);
  logger.info(
    { workers: options.workers, port: options.port ?? config.server.port, quotas: quotasPath },
    'cascade primary: workers share the port',
  );

  function reload(): ReloadOutcome {
    if (closing) return { ok: false, problems: ['shutting down; reload ignored'] };
    const result = options.reloadSource?.();
    if (result?.config === undefined) {
      const problems = result?.errors.map((e) => `${e.path}: ${e.message}`) ?? [
        'there is no config file to reload',
      ];
      logger.error(
        { problems },
        `config reload failed; keeping the running config: ${problems.join('; ')}`,
      );
      return { ok: false, problems };
    }
    const diff = diffNodes(config.nodes, result.config.nodes);
    config = { ...result.config, server: config.server, cluster: config.cluster };
    flusher.applyNodeSet(config.nodes);
    operator.retain();
    for (const worker of Object.values(cluster.workers ?? {}))
      if (worker) tell(worker, { t: 'reload' });
    logger.info(
      diff,
      `config reloaded: +${diff.added.length} -${diff.removed.length} ~${diff.changed.length}`,
    );
    return { ok: true, diff, needsRestart: [] };
  }

  const close = async (): Promise<PrimarySummary> => {
    closing = true;
    clearInterval(calm);
    clearInterval(split);
    const workers = Object.values(cluster.workers ?? {}).filter(
      (w): w is Worker => w !== undefined,
    );
    const exited = workers.map(
      (w) => new Promise<void>((resolve) => w.once('exit', () => resolve())),
    );
    for (const worker of workers) tell(worker, { t: 'shutdown' });
    const deadline = setTimeout(() => {
      for (const worker of workers) worker.process.kill('SIGKILL');
    }, DRAIN_TIMEOUT_MS + 5000);
    await Promise.all(exited);
    clearTimeout(deadline);
    cluster.off('message', onMessage);
    cluster.off('exit', onExit);
    stopTimers();
    await admin?.close();
    await coordinator?.stop();
    metricsServer?.closeAllConnections();
    metricsServer?.close();
    return finalUsageWrite(flusher, ledger, quotasPath, logger);
  };
  let closed: Promise<PrimarySummary> | undefined;
  return { quotasPath, adminPort: admin?.port, reload, close: () => (closed ??= close()) };
}

/** The cluster gauges without Redis: one replica, its full limits. */
function localSample(nodes: () => Config['nodes']): () => ClusterSample {
  return () => ({
    members: 1,
    redisUp: true,
    errors: 0,
    syncAgeSeconds: 0,
    shares: new Map(nodes().map((n) => [n.name, { rps: n.rpsLimit, concurrent: n.maxConcurrent }])),
    unflushed: new Map<string, number>(),
  });
}
