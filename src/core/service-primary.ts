/**
 * The primary of `cascade serve --workers N` (node:cluster): it does not serve requests — its
 * workers do, on one shared port — but it is the one process the rest of the system sees.
 * It owns the config (it reads and checks the file, then hands the parsed result to each
 * worker over IPC; workers never read it), quotas.json (the workers' usage flows into its
 * ledger), the lock, the admin listener, the Redis coordination when replicas share limits,
 * and the order of things: it restarts a worker that crashed, reloads (SIGHUP) exactly as one
 * process does and hands the result to every worker, and on SIGTERM drains them all before it
 * writes usage once. /health and /metrics asked of any worker are answered here for the
 * whole proxy. Its parts — usage store, fleet link, admin surface — are the single process's.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { handleStatusRoute } from './admin/admin-routes.js';
import { fleetKeyAdmin } from './admin/fleet-keys.js';
import { FleetOperator } from './admin/fleet-operator.js';
import type { NodeView } from './admin/node-view.js';
import { MONOTONIC_CLOCK } from './clock.js';
import type { Config, LoadResult } from './config/types.js';
import { coordinatedNodes } from './cluster/coordinated-nodes.js';
import { keyOverrideSync } from './cluster/key-override-sync.js';
import { accountEntries } from './config/config-chains.js';
import type { RedisCoordinator } from './cluster/redis-coordinator.js';
import { WorkerHub } from './cluster/worker-hub.js';
import { METRICS_GATHER_TIMEOUT_MS, WorkerAsks } from './cluster/worker-asks.js';
import {
  tellWorker as tell,
  type PrimaryCommand,
  type WorkerMessage,
} from './cluster/worker-messages.js';
import type { AdminServer } from './http/admin-server.js';
import { fleetHealthReport, type WorkerNodeHealth } from './http/health.js';
import { withChainsAndAccounts } from './http/chain-health.js';
import { accountUsageName } from './config/accounts-section.js';
import { hostPort } from './http/listen.js';
import { DRAIN_TIMEOUT_MS } from './http/server.js';
import type { ClusterSample, SeriesSnapshot } from './metrics.js';
import { FleetSeries } from './prom-fleet-series.js';
import { ClientKeys } from './keys/client-keys.js';
import { keyChangesPath, readKeyChanges } from './keys/key-changes-file.js';
import { KeyChangesStore } from './keys/key-changes-store.js';
import { keyPeriods } from './keys/key-periods.js';
import { registerClusterGauges } from './prom-cluster-metrics.js';
import type { RolloverEvent } from './quota/rollover.js';
import { startAdminSurface, statusOnMetricsPort } from './service-admin.js';
import { fleetKeyLink, linkFleet } from './service-fleet.js';
import { logNodes, logRollover } from './service-logs.js';
import { startMetricsPort } from './service-metrics-port.js';
import { applyReload, reloadWhileClosing, type ReloadOutcome } from './service-reload.js';
import { UsageStore, startFailure, type FinalUsage } from './service-usage.js';
import { WORKER_SYNC_MS } from './service-worker.js';

/** How to start the primary. */
export interface PrimaryOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly workers: number;
  readonly quotasPath: string;
  readonly reloadSource?: () => LoadResult;
  /** Where the workers listen (the --host and --port flags), for the log. */
  readonly host?: string | undefined;
  readonly port?: number | undefined;
}

/** What a stopped primary leaves behind. */
export type PrimarySummary = FinalUsage;

/** A running primary. */
export interface CascadePrimary {
  readonly quotasPath: string;
  readonly adminPort: number | undefined;
  /**
   * Settles when a worker could not start serving (a port it cannot bind): every worker would
   * fail the same way, so the caller stops the proxy and exits non-zero.
   */
  readonly failed: Promise<WorkerFailure>;
  reload(): ReloadOutcome;
  close(): Promise<PrimarySummary>;
}

/** Why a worker could not start serving, as it said it. */
export interface WorkerFailure {
  readonly message: string;
  readonly hint?: string;
}

/** A worker that keeps crashing is restarted after up to this long. */
const MAX_RESTART_DELAY_MS = 5000;

/**
 * Starts the primary and forks its workers; resolves once they are forked. The line 'cascade
 * primary: workers share the port' follows once every one of them listens.
 */
export async function startCascadePrimary(options: PrimaryOptions): Promise<CascadePrimary> {
  const { logger, quotasPath } = options;
  const clock = MONOTONIC_CLOCK;
  /** The config in force: the one every worker was handed. */
  let config = options.config;
  const nodes = () => config.nodes;
  // Provider accounts' pools are metered and shared between workers beside the nodes'; client
  // keys' usage is more counters in this ledger, booked by every worker (workers.md).
  const metered = () => [...config.nodes, ...accountEntries(config)];
  const counted = () => keyPeriods(config.keys?.keys ?? []);
  const usage = await UsageStore.open({
    config,
    quotasPath,
    nodes: metered,
    counted,
    clock,
    logger,
  });
  const { ledger } = usage;
  const onRollover = (events: readonly RolloverEvent[]) => logRollover(logger, events);
  const hub = new WorkerHub(ledger, () =>
    coordinatedNodes(metered(), ledger, clock.wallNow(), onRollover, counted()),
  );
  const keys = new ClientKeys(config.keys, config.server.requireKey === true, clock);
  keys.shareUsage(ledger, async (name) => {
    await coordinator?.reset([name]);
    ledger.reset(name);
  });
  // The operator's revokes and budgets from before a restart: every worker starts with them.
  const changesPath = keyChangesPath(quotasPath);
  const keyChangesKept = KeyChangesStore.restore(
    changesPath,
    keys,
    await readKeyChanges(changesPath),
  );
  const health = new Map<number, Record<string, WorkerNodeHealth>>();
  let coordinator: RedisCoordinator | undefined;
  let admin: AdminServer | undefined;
  let metricsServer: Server | undefined;
  const registry = new Registry();
  // The workers' series added up, then the primary's own. Only workers that have reported are
  // asked: their series exist and they listen (one still starting would stall the scrape).
  const series = new FleetSeries<Worker>(async (worker) => {
    const [answer] = await asks.ask(
      [worker],
      (id): PrimaryCommand => ({ t: 'series', id }),
      tell,
      METRICS_GATHER_TIMEOUT_MS,
    );
    return answer as SeriesSnapshot | undefined;
  });
  const renderMetrics = async (): Promise<string> =>
    `${await series.render(live().filter((worker) => health.has(worker.id)))}${await registry.metrics()}`;
  let closing = false;
  let crashes = 0;
  let fail: (failure: WorkerFailure) => void = () => undefined;
  const failed = new Promise<WorkerFailure>((resolve) => (fail = resolve));
  const asks = new WorkerAsks();
  const live = (): Worker[] =>
    Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
  // The workers that have reported, so handle what is sent to them: one still starting (loading
  // its modules, before its first report) would leave a question unanswered until the ask's
  // deadline — and it serves nothing until its first reports are answered, with the state.
  const answering = (): Worker[] => live().filter((worker) => health.has(worker.id));
  /** Workers listening on the shared port; the proxy is announced once all of them are. */
  const serving = new Set<number>();
  let announced = false;
  const keyAdmin = fleetKeyAdmin(
    keys,
    {
      tellOverrides: (overrides) => {
        // One still starting queues the change and applies it before it serves; no wait for it.
        const starting = live().filter((worker) => !health.has(worker.id));
        for (const worker of starting) tell(worker, { t: 'keys', overrides });
        return asks.ask(answering(), (id): PrimaryCommand => ({ t: 'keys', id, overrides }), tell);
      },
      askActivity: () =>
        asks.ask(answering(), (id): PrimaryCommand => ({ t: 'keyview', id }), tell),
    },
    fleetKeyLink(() => coordinator, config.cluster),
    () => keyChangesKept.saveNow(logger),
  );
  // A change another replica made reaches every worker as one made here does.
  const keyChanges = keyOverrideSync(
    keys,
    logger,
    () => {
      for (const worker of live()) tell(worker, { t: 'keys', overrides: keys.overrides() });
    },
    () => keyChangesKept.saveInBackground(logger),
  );
  const operator = new FleetOperator({
    nodes,
    config: () => config,
    used: (name) => ledger.counter(name).used,
    clock,
    logger,
    reload: () => reload(),
    workerViews: async () =>
      (await asks.ask(
        answering(),
        (id): PrimaryCommand => ({ t: 'view', id }),
        tell,
      )) as NodeView[][],
    // One still starting gets the cordons with the state that answers its first reports.
    applyCordons: async (cordoned) => {
      await asks.ask(answering(), (id): PrimaryCommand => ({ t: 'cordon', id, cordoned }), tell);
    },
  });

  // Structured clone, so the parsed config (Maps, typed arrays, Infinity) crosses as it is.
  cluster.setupPrimary({ serialization: 'advanced' });
  const fork = (): void => {
    const worker = cluster.fork();
    worker.on('error', (err) =>
      logger.debug({ worker: worker.id, err: err.message }, 'worker channel'),
    );
    hub.add(worker.id);
  };
  const onMessage = (worker: Worker, message: WorkerMessage): void => {
    if (message.t === 'hello') {
      tell(worker, { t: 'start', config, workers: options.workers });
      // A worker (re)started after a revoke or a budget change starts with them.
      tell(worker, { t: 'keys', overrides: keys.overrides() });
    } else if (message.t === 'sync') {
      health.set(worker.id, message.health);
      operator.penalties(message.penalties);
      tell(worker, { ...hub.sync(worker.id, message), cordoned: operator.cordoned });
    } else if (message.t === 'reply') {
      asks.answer(message.id, message.value);
    } else if (message.t === 'serving') {
      serving.add(worker.id);
      if (!announced && serving.size === options.workers) {
        announced = true;
        announce(message.port);
      }
    } else if (message.t === 'failed') {
      if (!closing) fail(message);
    } else if (message.t === 'ask') {
      const cordoned = new Set(operator.cordoned);
      const accountUsed = (name: string) => ledger.counter(accountUsageName(name)).used;
      const answer =
        message.what === 'health'
          ? Promise.resolve(
              withChainsAndAccounts(
                fleetHealthReport(config.nodes, [...health.values()], cordoned),
                config,
                accountUsed,
                new Date(),
              ),
            )
          : renderMetrics();
      answer.then(
        (value) => tell(worker, { t: 'answer', id: message.id, value }),
        (err: unknown) => logger.error({ err }, 'metrics rendering failed'),
      );
    }
  };
  const onExit = (worker: Worker, code: number | null, signal: string | null): void => {
    hub.remove(worker.id);
    health.delete(worker.id);
    serving.delete(worker.id);
    series.retire(worker.id);
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
    coordinator = await linkFleet(usage, config.cluster, () => hub, clock, logger, keyChanges);
    const joined = coordinator;
    registerClusterGauges(registry, joined ? () => joined.sample() : localSample(nodes));
    admin = await startAdminSurface({
      server: config.server,
      nodes,
      accounts: () => config.accounts ?? [],
      usage,
      coordinator,
      operator,
      logger,
      keys: keyAdmin,
    });
    usage.claim(admin?.port);
    const { enableMetrics, metricsPort } = config.server;
    if (enableMetrics && metricsPort !== undefined) {
      const statusPage = statusOnMetricsPort(config.server);
      metricsServer = await startMetricsPort({
        port: metricsPort,
        render: renderMetrics,
        contentType: registry.contentType,
        pages: (req, res, path) =>
          statusPage && handleStatusRoute(req, res, path, operator, logger),
      });
    }
  } catch (err) {
    await admin?.close();
    await coordinator?.stop();
    metricsServer?.close();
    throw startFailure(err, quotasPath);
  }
  cluster.on('message', onMessage);
  cluster.on('exit', onExit);
  const stopTimers = usage.startTimers();
  // One split of every limit between the workers per sync interval (see WorkerHub.tick).
  const split = setInterval(() => hub.tick(), WORKER_SYNC_MS);
  // Reset the crash backoff once workers have run a while.
  const calm = setInterval(() => (crashes = 0), 30_000).unref();
  for (let i = 0; i < options.workers; i++) fork();
  logNodes(config.nodes, logger);
  function announce(port: number): void {
    const host = options.host ?? config.server.host;
    logger.info(
      { workers: options.workers, url: `http://${hostPort(host, port)}`, port, quotas: quotasPath },
      'cascade primary: workers share the port',
    );
  }

  // The same plan, log lines and answer as one process; the workers get what was checked.
  const target = {
    running: () => config,
    apply: (next: Config): void => {
      config = next;
      keys.reconfigure(next.keys);
      operator.retain();
      for (const worker of Object.values(cluster.workers ?? {}))
        if (worker) tell(worker, { t: 'reload', config: next });
    },
    flusher: usage.flusher,
    keysInLedger: true,
  };
  function reload(): ReloadOutcome {
    return closing ? reloadWhileClosing(logger) : applyReload(target, logger, options.reloadSource);
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
    await keyChangesKept.close(logger);
    metricsServer?.closeAllConnections();
    metricsServer?.close();
    return usage.close();
  };
  let closed: Promise<PrimarySummary> | undefined;
  return {
    quotasPath,
    adminPort: admin?.port,
    failed,
    reload,
    close: () => (closed ??= close()),
  };
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
