/**
 * The usage store of a service (one cascade, or the primary of `--workers`): the ledger —
 * shared with replicas through Redis when `[cluster] redis_url` is set, local otherwise —
 * quotas.json behind it, the lock that keeps the file to one server, the timers that keep it
 * written (flush, threshold watch, lock heartbeat) and the final write at shutdown.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config, NodeConfig } from './config/types.js';
import { StartupError } from './errors.js';
import { keyChangesPath } from './keys/key-changes-file.js';
import { removeStaleTemps } from './quota/atomic-file.js';
import { QuotaFlusher } from './quota/quota-flusher.js';
import {
  HEARTBEAT_MS,
  acquireServerLock,
  refreshServerLock,
  releaseServerLock,
} from './quota/server-lock.js';
import type { PeriodNode } from './quota/rollover.js';
import { SharedUsageLedger } from './quota/shared-usage-ledger.js';
import { LocalUsageLedger, type UsageLedger } from './quota/usage-ledger.js';
import { logRollover } from './service-logs.js';

/** The node configs now in force. */
export type NodeList = () => readonly NodeConfig[];

/** What is metered now: the nodes and the provider accounts (`account:NAME`). */
export type MeteredList = () => readonly Pick<
  NodeConfig,
  'name' | 'resetDay' | 'spilloverThreshold'
>[];

/** How to open a usage store. */
export interface UsageStoreOptions {
  readonly config: Config;
  /** Absolute path of quotas.json. */
  readonly quotasPath: string;
  /** The nodes and accounts in force (they change with reloads). */
  readonly nodes: MeteredList;
  /** More counters kept beside the nodes' (client keys' usage, when shared); default none. */
  readonly counted?: () => readonly PeriodNode[];
  readonly clock: Clock;
  readonly logger: Logger;
}

/** What the final write left: exit code 1 when it failed, and each node's usage. */
export interface FinalUsage {
  readonly code: 0 | 1;
  readonly usage: Record<string, number>;
}

/** The ledger, quotas.json, its lock and timers. */
export class UsageStore {
  readonly ledger: UsageLedger;
  /** The ledger when it is shared with replicas (Redis), else undefined. */
  readonly shared: SharedUsageLedger | undefined;
  readonly flusher: QuotaFlusher;
  readonly #options: UsageStoreOptions;

  private constructor(options: UsageStoreOptions) {
    this.#options = options;
    this.shared =
      options.config.cluster?.redisUrl !== undefined ? new SharedUsageLedger() : undefined;
    this.ledger = this.shared ?? new LocalUsageLedger();
    this.flusher = new QuotaFlusher({
      ledger: this.ledger,
      path: options.quotasPath,
      nodes:
        options.counted === undefined
          ? options.nodes
          : () => [...options.nodes(), ...options.counted!()],
      now: () => new Date(options.clock.wallNow()),
    });
  }

  /** Opens the store: usage restored from quotas.json, billing-period resets logged. */
  static async open(options: UsageStoreOptions): Promise<UsageStore> {
    const store = new UsageStore(options);
    logRollover(options.logger, (await store.flusher.restore()).events);
    return store;
  }

  get quotasPath(): string {
    return this.#options.quotasPath;
  }

  /** Takes the quotas lock, naming the admin port other commands reach this server on. */
  claim(adminPort: number | undefined): void {
    acquireServerLock(this.quotasPath, adminPort ?? null);
    // Ours now: temp files a server killed mid-write left beside it are nobody's.
    for (const file of [this.quotasPath, keyChangesPath(this.quotasPath)])
      void removeStaleTemps(file).catch(() => undefined);
  }

  /** Starts the timers that run while the service serves; returns their stop. */
  startTimers(): () => void {
    const { logger, quotasPath } = this.#options;
    const flushSeconds = this.#options.config.server.quotaFlushSeconds;
    // Threshold crossings are checked every second: a flush period (60 s) is too late to hear of it.
    const threshold = setInterval(thresholdWatcher(this.#options.nodes, this.ledger, logger), 1000);
    const flush = setInterval(() => {
      void this.flusher.tick().then(({ events, error }) => {
        logRollover(logger, events);
        if (error)
          logger.error(
            { err: error.message, file: quotasPath },
            'quota flush failed; retrying at the next tick',
          );
      });
    }, flushSeconds * 1000);
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

  /** The last step of a shutdown: the final write (logged when it fails), the lock released. */
  async close(): Promise<FinalUsage> {
    const { logger, quotasPath } = this.#options;
    let code: 0 | 1 = 0;
    try {
      await this.flusher.close();
    } catch (err) {
      logger.error({ err: (err as Error).message, file: quotasPath }, 'final quota write failed');
      code = 1;
    }
    releaseServerLock(quotasPath);
    const usage = Object.fromEntries(
      [...this.ledger.snapshot()].map(([name, entry]) => [name, entry.used]),
    );
    return { code, usage };
  }
}

/**
 * A failed start, as the operator reads it: anything not already a StartupError happened
 * while claiming quotas.json (the lock or the listeners that name it).
 */
export function startFailure(err: unknown, quotasPath: string): unknown {
  if (err instanceof Error && !(err instanceof StartupError)) {
    return new StartupError(
      `cannot claim ${quotasPath}: ${err.message}`,
      'make sure its directory exists and is writable',
    );
  }
  return err;
}

/** Logs each node the first time its usage passes its spillover threshold in a period. */
function thresholdWatcher(nodes: MeteredList, ledger: UsageLedger, logger: Logger): () => void {
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
