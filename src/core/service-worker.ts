/**
 * One worker of `cascade serve --workers N` (node:cluster; the workers share the listening
 * port). It serves requests like a single cascade, but the primary owns the config file,
 * quotas.json, the lock and the admin listener: the worker starts from the config the primary
 * checked (asked for over IPC; it never reads the file, so a file rewritten meanwhile cannot
 * reach it) and takes each reload from the primary the same way. Every ≤ 50 ms it reports
 * what it booked and wanted and gets back the fleet's usage and its share of every limit.
 * /health and /metrics answer for the whole proxy (asked of the primary). The worker ignores
 * SIGINT/SIGTERM/SIGHUP: the primary tells it when to drain and reload, and it leaves if the
 * primary goes away.
 */
import { accountUsageName } from './config/accounts-section.js';
import type { Logger } from 'pino';
import { LocalOperator } from './admin/local-operator.js';
import type { Clock } from './clock.js';
import { MONOTONIC_CLOCK } from './clock.js';
import { isCascadeError } from './errors.js';
import { rebindConfig } from './config/config-handoff.js';
import type { PrimaryState } from './cluster/worker-hub.js';
import { METRICS_GATHER_TIMEOUT_MS } from './cluster/worker-asks.js';
import { PrimaryInbox, tellPrimary as send } from './cluster/worker-messages.js';
import {
  addKeyDemand,
  applyWorkerShare,
  handleKeyCommand,
  shareKeysWithPrimary,
} from './cluster/worker-keys.js';
import { ownReadings, type RelayedReading } from './chain/chain-state.js';
import { workerNodeChain, type HealthReport, type WorkerNodeHealth } from './http/health.js';
import { ProxyServer } from './http/server.js';
import { createPromMetrics } from './prom-metrics.js';
import type { MethodRegistry } from './protocol/method-registry.js';
import { SharedUsageLedger } from './quota/shared-usage-ledger.js';
import { startWs } from './service-ws.js';

/**
 * How long a worker waits for the primary's /health or /metrics. The primary's /metrics waits
 * up to METRICS_GATHER_TIMEOUT_MS for every serving worker's series: waiting less here would
 * turn a slow but complete answer on a busy machine into a 500.
 */
const PRIMARY_ANSWER_TIMEOUT_MS = METRICS_GATHER_TIMEOUT_MS + 1000;

/** How often a worker reports to the primary (the bound is 50 ms). */
export const WORKER_SYNC_MS = 50;
/** Answers a new worker waits for before it listens (its share grows in over a few splits). */
const READY_AFTER_STATES = 5;

/** How to start a worker (the config comes from the primary). */
export interface WorkerOptions {
  readonly registry: MethodRegistry;
  readonly logger: Logger;
  readonly version: string;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly accessLog?: boolean | undefined;
  readonly clock?: Clock;
}

/** Runs this process as a worker until the primary says to stop; resolves when it has. */
export async function runCascadeWorker(options: WorkerOptions): Promise<void> {
  // The primary drains the workers; a signal to the whole process group must not cut one short
  // (not even while this worker waits for its config).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(signal, () => undefined);
  const inbox = new PrimaryInbox();
  const handed = await inbox.start();
  if (handed === undefined) return; // the primary left before it answered
  const config = rebindConfig(handed, options.registry);
  const clock = options.clock ?? MONOTONIC_CLOCK;
  const ledger = new SharedUsageLedger();
  const penalties: Array<readonly [string, number]> = [];
  const asks = new Map<number, (value: unknown) => void>();
  let nextAsk = 0;
  const ask = <T>(what: 'health' | 'metrics'): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = nextAsk++;
      const timer = setTimeout(() => {
        asks.delete(id);
        reject(new Error(`the primary did not answer ${what}`));
      }, PRIMARY_ANSWER_TIMEOUT_MS);
      asks.set(id, (value) => {
        clearTimeout(timer);
        resolve(value as T);
      });
      void send({ t: 'ask', id, what });
    });
  const metrics = config.server.enableMetrics
    ? createPromMetrics({ version: options.version })
    : undefined;
  const server = ProxyServer.create({
    config,
    registry: options.registry,
    logger: options.logger,
    usage: ledger,
    version: options.version,
    metrics,
    clock,
    host: options.host,
    port: options.port,
    accessLog: options.accessLog,
    onNodeHealth: (node, seconds) => penalties.push([node, seconds]),
    fleetView: { health: () => ask<HealthReport>('health'), metrics: () => ask<string>('metrics') },
  });
  // Client keys spend one budget and split their limits with the other workers.
  shareKeysWithPrimary(server.keys, ledger, inbox.workers);

  // Only asked for when the primary has an admin listener.
  const operator =
    config.server.adminPort === undefined
      ? undefined
      : new LocalOperator(server.topology, clock, options.logger, () => ({
          ok: false,
          problems: ['the primary reloads'],
        }));
  const applyCordons = (cordoned: readonly string[]): void => {
    for (const node of server.topology.table.all) node.cordoned = cordoned.includes(node.name);
  };

  const report = (): Promise<void> => {
    const demand: Record<string, readonly [number, number]> = {};
    const health: Record<string, WorkerNodeHealth> = {};
    const now = clock.now();
    const table = server.topology.table;
    for (const account of server.topology.accounts()) {
      const wanted = account.takeDemand();
      demand[accountUsageName(account.name)] = [wanted.rps, wanted.concurrent];
    }
    for (const node of table.all) {
      const wanted = node.takeDemand();
      demand[node.name] = [wanted.rps, wanted.concurrent];
      const down = node.penalty.isActive(now) ? node.penalty.until - now : 0;
      const ema = node.ema.isMeasured ? node.ema.micros : -1;
      const chain = workerNodeChain(node, server.topology.chainOf(node), now);
      health[node.name] = chain === undefined ? [down, ema] : [down, ema, chain];
    }
    addKeyDemand(server.keys, demand);
    // IPC to the primary does not lose messages: each batch counts as delivered once sent.
    const deltas = Object.fromEntries(ledger.takeDeltas().deltas);
    ledger.acknowledge();
    const saved = Object.fromEntries(ledger.takeSaved());
    const heads: RelayedReading[] = [];
    for (const node of table.all) ownReadings(node.heads, headsSince, now, heads);
    headsSince = now;
    const sync = {
      t: 'sync',
      deltas,
      demand,
      penalties: penalties.splice(0),
      health,
      saved,
    } as const;
    return send(heads.length === 0 ? sync : { ...sync, heads });
  };
  /** Head readings from before this were reported already. */
  let headsSince = -Infinity;

  let states = 0;
  let ready: () => void = () => undefined;
  const shared = new Promise<void>((resolve) => (ready = resolve));
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));

  const apply = (state: PrimaryState & { readonly cordoned?: readonly string[] }): void => {
    const now = clock.now();
    for (const [name, [used, epoch]] of Object.entries(state.totals)) {
      ledger.settle(name, { used, epoch });
    }
    for (const [name, share] of Object.entries(state.shares))
      applyWorkerShare(server.topology, server.keys, name, share, now);
    for (const [name, seconds] of state.penalties) {
      const node = server.topology.node(name);
      if (node === undefined) continue;
      if (seconds === 0) node.penalty.clear();
      else node.penalty.penalize(now, seconds);
    }
    if (state.cordoned !== undefined) applyCordons(state.cordoned);
    for (const reading of state.heads ?? []) {
      const node = server.topology.node(reading[0]);
      if (node === undefined) continue;
      const at = now - reading[4];
      server.topology.chainOf(node).observeRelayed(node.heads, reading[1], reading, at, now);
    }
    // A few answers: this worker has its shares, and the others have made room for them.
    if (++states === READY_AFTER_STATES) ready();
  };

  inbox.handle((message) => {
    if (handleKeyCommand(server.keys, message, send)) return;
    if (message.t === 'state') apply(message);
    else if (message.t === 'answer') asks.get(message.id)?.(message.value);
    else if (message.t === 'reload') server.reload(rebindConfig(message.config, options.registry));
    else if (message.t === 'series')
      void (metrics?.series?.() ?? Promise.resolve([])).then((value) =>
        send({ t: 'reply', id: message.id, value }),
      );
    else if (message.t === 'view')
      void send({ t: 'reply', id: message.id, value: operator?.views() ?? [] });
    else if (message.t === 'cordon') {
      applyCordons(message.cordoned);
      void send({ t: 'reply', id: message.id, value: null });
    } else if (message.t === 'shutdown') stop();
  });
  process.on('disconnect', () => stop());

  const timer = setInterval(() => void report(), WORKER_SYNC_MS);
  void report();
  await shared;
  let ws: Awaited<ReturnType<typeof startWs>>;
  try {
    await server.listen();
    // Each worker takes upgrades on the shared port (and ws_port): node:cluster hands a new
    // connection, WebSocket or not, to one worker, whose sockets and subscriptions stay there.
    ws = await startWs(server, options);
  } catch (err) {
    // Every worker would fail the same way: the primary stops rather than restart them.
    clearInterval(timer);
    operator?.stop();
    await server.close(0);
    const hint = isCascadeError(err) ? err.hint : undefined;
    await send({ t: 'failed', message: (err as Error).message, ...(hint ? { hint } : {}) });
    if (process.connected) process.disconnect();
    throw err;
  }
  options.logger.info({ pid: process.pid }, 'worker serving');
  void send({ t: 'serving', port: server.port });
  await stopped;
  operator?.stop();
  await ws.close();
  await server.close();
  clearInterval(timer);
  await report(); // what the last requests booked
  await send({ t: 'bye' });
  // The IPC channel keeps a worker alive: closing it lets the process end.
  if (process.connected) process.disconnect();
}
