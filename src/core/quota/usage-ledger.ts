import { isCalendarDay } from './billing-period.js';

/** One node's usage as persisted: credits booked and the first day of their billing period. */
export interface QuotaEntry {
  readonly used: number;
  /** 'YYYY-MM-DD' (UTC); `period_start` in quotas.json. */
  readonly periodStart: string;
  /**
   * Of `used`, credits booked here that the shared store (Redis) has not acknowledged yet:
   * sent again after a restart, so a killed replica loses nothing it had written.
   */
  readonly unsent?: number;
  /** Credits the cache and coalescing saved this node in the period (`saved`, only when > 0). */
  readonly saved?: number;
}

/** Usage of every node that has a period marker, keyed by node name. */
export type QuotaSnapshot = ReadonlyMap<string, QuotaEntry>;

/**
 * A node's credit counter. The node takes it once at construction; the request path reads
 * `used` and calls `add` with no lookup and no allocation.
 */
export interface UsageCounter {
  readonly name: string;
  /** Credits booked in the current billing period. */
  readonly used: number;
  /** Books `credits` (a whole number ≥ 0). Never refunded. */
  add(credits: number): void;
  /** Credits answers from the cache or a shared flight saved this node in the period. */
  readonly saved: number;
  /** Records `credits` saved. */
  save(credits: number): void;
}

/** What a ledger forgot when a node left the configuration (for the log line). */
export interface RetiredUsage {
  readonly name: string;
  readonly used: number;
  readonly periodStart: string | undefined;
}

/**
 * Where per-node usage lives. Routing sees only counters; where the numbers are kept (this
 * process's memory now, a store shared by several processes later) is the ledger's business.
 */
export interface UsageLedger {
  /** The counter for `name`: the same object on every call until `retain` drops the name. */
  counter(name: string): UsageCounter;
  /** First day of the billing period `name`'s usage belongs to; undefined before it has one. */
  periodStart(name: string): string | undefined;
  /** Sets the period marker of `name` ('YYYY-MM-DD'); usage is untouched. */
  setPeriodStart(name: string, day: string): void;
  /** Sets the usage of `name` to 0; the period marker is kept. Starts a new epoch. */
  reset(name: string): void;
  /** How many times `name`'s usage was reset (a lower total is legitimate only across epochs). */
  epoch(name: string): number;
  /** Restores `name` from quotas.json (usage, and what was not yet shared). */
  restore(name: string, entry: QuotaEntry): void;
  /** Forgets counters and markers of every name not in `names`; returns what was forgotten. */
  retain(names: readonly string[]): RetiredUsage[];
  /** Usage of every node that has a period marker. */
  snapshot(): QuotaSnapshot;
}

/**
 * What every ledger keeps alike: one counter per node name, made on first use and the same
 * object until the name is forgotten, and each name's period marker. Subclasses say what a
 * counter is (`newCounter`) and how usage is reset, restored, retained and shared.
 */
export abstract class CounterLedger<C extends UsageCounter> {
  /** Counters by node name. */
  protected readonly counters = new Map<string, C>();
  /** First day of each name's billing period ('YYYY-MM-DD'). */
  protected readonly markers = new Map<string, string>();

  /** A fresh counter for a name seen for the first time. */
  protected abstract newCounter(name: string): C;

  counter(name: string): UsageCounter {
    return this.counterOf(name);
  }

  periodStart(name: string): string | undefined {
    return this.markers.get(name);
  }

  setPeriodStart(name: string, day: string): void {
    if (!isCalendarDay(day)) throw new RangeError(`not a calendar day 'YYYY-MM-DD': "${day}"`);
    this.markers.set(name, day);
  }

  protected counterOf(name: string): C {
    let counter = this.counters.get(name);
    if (counter === undefined) {
      counter = this.newCounter(name);
      this.counters.set(name, counter);
    }
    return counter;
  }
}

/** The counter `LocalUsageLedger` hands out: a plain field, so `add` is one store. */
class LocalCounter implements UsageCounter {
  used = 0;
  saved = 0;

  constructor(readonly name: string) {}

  add(credits: number): void {
    this.used += credits;
  }

  save(credits: number): void {
    this.saved += credits;
  }
}

/** A ledger in this process's memory; persisted through quotas.json by the caller. */
export class LocalUsageLedger extends CounterLedger<LocalCounter> implements UsageLedger {
  readonly #epochs = new Map<string, number>();

  protected override newCounter(name: string): LocalCounter {
    return new LocalCounter(name);
  }

  reset(name: string): void {
    const counter = this.counterOf(name);
    counter.used = counter.saved = 0;
    this.#epochs.set(name, this.epoch(name) + 1);
  }

  epoch(name: string): number {
    return this.#epochs.get(name) ?? 0;
  }

  restore(name: string, entry: QuotaEntry): void {
    const counter = this.counterOf(name);
    counter.used = entry.used;
    counter.saved = entry.saved ?? 0;
    this.setPeriodStart(name, entry.periodStart);
  }

  retain(names: readonly string[]): RetiredUsage[] {
    const keep = new Set(names);
    const gone = new Set([...this.counters.keys(), ...this.markers.keys()]);
    const retired: RetiredUsage[] = [];
    for (const name of gone) {
      if (keep.has(name)) continue;
      const used = this.counters.get(name)?.used ?? 0;
      retired.push({ name, used, periodStart: this.markers.get(name) });
      this.counters.delete(name);
      this.markers.delete(name);
      this.#epochs.delete(name);
    }
    return retired;
  }

  snapshot(): QuotaSnapshot {
    const entries = new Map<string, QuotaEntry>();
    for (const [name, periodStart] of this.markers) {
      const counter = this.counters.get(name);
      const saved = counter?.saved ?? 0;
      entries.set(name, { used: counter?.used ?? 0, periodStart, ...(saved > 0 ? { saved } : {}) });
    }
    return entries;
  }
}

/**
 * Restores usage and markers from a snapshot (read from quotas.json) for the configured
 * `nodeNames`; entries of other names are ignored. Returns the names that were restored.
 */
export function seedLedger(
  ledger: UsageLedger,
  snapshot: QuotaSnapshot,
  nodeNames: readonly string[],
): string[] {
  const seeded: string[] = [];
  for (const name of nodeNames) {
    const entry = snapshot.get(name);
    if (entry === undefined) continue;
    ledger.restore(name, entry);
    seeded.push(name);
  }
  return seeded;
}
