import { readQuotaFile, writeQuotaFile } from './quota-file.js';
import { assignMarker, rollover } from './rollover.js';
import type { PeriodNode, RolloverEvent } from './rollover.js';
import { seedLedger } from './usage-ledger.js';
import type { QuotaEntry, QuotaSnapshot, RetiredUsage, UsageLedger } from './usage-ledger.js';
import { periodInForce, periodStart as periodStartOf } from './billing-period.js';

/** What a QuotaFlusher works on; `now`, `read` and `write` are injectable for tests. */
export interface QuotaFlusherOptions {
  readonly ledger: UsageLedger;
  /** quotas.json path. */
  readonly path: string;
  /** The live nodes, asked at every step (a reload changes them). */
  readonly nodes: () => readonly PeriodNode[];
  /** Wall clock; its UTC date picks the billing period. Default: the system clock. */
  readonly now?: () => Date;
  readonly read?: (path: string) => Promise<QuotaSnapshot>;
  readonly write?: (path: string, snapshot: QuotaSnapshot) => Promise<void>;
}

/** What startup restored. */
export interface RestoreResult {
  /** Configured nodes whose usage came from the file. */
  readonly seeded: readonly string[];
  /** Names in the file that are not configured (dropped at the next write). */
  readonly ignored: readonly string[];
  readonly events: readonly RolloverEvent[];
}

/** What one flush tick did. */
export interface FlushTickResult {
  readonly events: readonly RolloverEvent[];
  /** Why the tick failed, if it did; the next tick writes again. */
  readonly error: Error | undefined;
}

/** What publishing a new node set changed in the ledger. */
export interface NodeSetChange {
  /** Nodes no longer configured, with the usage forgotten. */
  readonly retired: readonly RetiredUsage[];
  /** New nodes and the period start each was given. */
  readonly assigned: readonly { readonly name: string; readonly periodStart: string }[];
}

/**
 * Keeps quotas.json and the ledger in step: `restore` at startup (read → seed → rollover),
 * `tick` every flush period (rollover → write), `close` at shutdown (write only). It owns no
 * timer: the server schedules `tick`. Writes are queued, so a slow tick never lands after the
 * final write.
 */
export class QuotaFlusher {
  readonly #ledger: UsageLedger;
  readonly #path: string;
  readonly #nodes: () => readonly PeriodNode[];
  readonly #now: () => Date;
  readonly #read: (path: string) => Promise<QuotaSnapshot>;
  readonly #write: (path: string, snapshot: QuotaSnapshot) => Promise<void>;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;
  /** Entries of the file that are not nodes' (client keys' usage), as restore found them. */
  #others: QuotaSnapshot = new Map();
  /** More usage written beside the nodes' (client keys'); absent = nodes only. */
  #extra: (() => QuotaSnapshot) | undefined;
  /**
   * Usage a reload retired but asked to keep (a client key's counter, its entry removed):
   * written as it was, and handed back to the counter if its name returns in the same period.
   */
  readonly #aside = new Map<string, QuotaEntry>();

  constructor(options: QuotaFlusherOptions) {
    this.#ledger = options.ledger;
    this.#path = options.path;
    this.#nodes = options.nodes;
    this.#now = options.now ?? (() => new Date());
    this.#read = options.read ?? readQuotaFile;
    this.#write = options.write ?? writeQuotaFile;
  }

  /** Startup: reads quotas.json, seeds configured nodes, rolls over. Throws QuotaFileError. */
  async restore(): Promise<RestoreResult> {
    const snapshot = await this.#read(this.#path);
    const nodes = this.#nodes();
    const names = new Set(nodes.map((node) => node.name));
    const seeded = seedLedger(this.#ledger, snapshot, [...names]);
    const ignored = [...snapshot.keys()].filter((name) => !names.has(name));
    this.#others = new Map([...snapshot].filter(([name]) => !names.has(name)));
    const events = rollover(this.#ledger, nodes, this.#now());
    return { seeded, ignored, events };
  }

  /** What restore read that is not a node's: client keys' usage, for their owner to restore. */
  get others(): QuotaSnapshot {
    return this.#others;
  }

  /** Writes `source`'s entries beside the nodes' from the next write on (client keys). */
  attach(source: () => QuotaSnapshot): void {
    this.#extra = source;
  }

  /**
   * Call when a node set is published (reload): forgets removed nodes and gives new ones their
   * period marker at once, so their usage is in the next write. No rollover.
   */
  applyNodeSet(
    nodes: readonly PeriodNode[],
    /** Names whose usage outlives their removal (kept aside, not forgotten). */
    keepAside?: (name: string) => boolean,
  ): NodeSetChange {
    const retired = this.#ledger.retain(nodes.map((node) => node.name));
    for (const gone of retired) {
      if (gone.periodStart !== undefined && keepAside?.(gone.name) === true)
        this.#aside.set(gone.name, { used: gone.used, periodStart: gone.periodStart });
    }
    const today = this.#now();
    const assigned: { name: string; periodStart: string }[] = [];
    for (const node of nodes) {
      const kept = this.#aside.get(node.name);
      if (kept !== undefined) {
        this.#aside.delete(node.name);
        // Back within the period it spent in: it carries on from there.
        if (periodInForce(kept.periodStart, periodStartOf(today, node.resetDay)))
          this.#ledger.restore(node.name, kept);
      }
      const periodStart = assignMarker(this.#ledger, node, today);
      if (periodStart !== undefined) assigned.push({ name: node.name, periodStart });
    }
    return { retired, assigned };
  }

  /** One flush tick: rollover, then write. Never rejects; does nothing once closed. */
  async tick(): Promise<FlushTickResult> {
    if (this.#closed) return { events: [], error: undefined };
    let events: RolloverEvent[] = [];
    try {
      events = rollover(this.#ledger, this.#nodes(), this.#now());
      await this.#enqueueWrite();
      return { events, error: undefined };
    } catch (err) {
      return { events, error: err instanceof Error ? err : new Error(String(err)) };
    }
  }

  /** Shutdown: waits for a running write, then writes once more (no rollover). Rejects on failure. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#enqueueWrite();
  }

  #enqueueWrite(): Promise<void> {
    // The snapshot is taken when the write starts, so it holds the latest usage.
    const run = this.#queue.then(() => this.#write(this.#path, this.#snapshot()));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #snapshot(): QuotaSnapshot {
    const nodes = this.#ledger.snapshot();
    const extra = this.#extra?.();
    if ((extra === undefined || extra.size === 0) && this.#aside.size === 0) return nodes;
    return new Map([...this.#aside, ...nodes, ...(extra ?? [])]);
  }
}
