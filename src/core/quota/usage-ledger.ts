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

/** The counter `LocalUsageLedger` hands out: a plain field, so `add` is one store. */
class LocalCounter implements UsageCounter {
  used = 0;

  constructor(readonly name: string) {}

  add(credits: number): void {
    this.used += credits;
  }
}

/** A ledger in this process's memory; persisted through quotas.json by the caller. */
export class LocalUsageLedger implements UsageLedger {
  readonly #counters = new Map<string, LocalCounter>();
  readonly #markers = new Map<string, string>();
  readonly #epochs = new Map<string, number>();

  counter(name: string): UsageCounter {
    return this.#counterOf(name);
  }

  periodStart(name: string): string | undefined {
    return this.#markers.get(name);
  }

  setPeriodStart(name: string, day: string): void {
    if (!isCalendarDay(day)) throw new RangeError(`not a calendar day 'YYYY-MM-DD': "${day}"`);
    this.#markers.set(name, day);
  }

  reset(name: string): void {
    this.#counterOf(name).used = 0;
    this.#epochs.set(name, this.epoch(name) + 1);
  }

  epoch(name: string): number {
    return this.#epochs.get(name) ?? 0;
  }

  restore(name: string, entry: QuotaEntry): void {
    this.#counterOf(name).used = entry.used;
    this.setPeriodStart(name, entry.periodStart);
  }

  retain(names: readonly string[]): RetiredUsage[] {
    const keep = new Set(names);
    const gone = new Set([...this.#counters.keys(), ...this.#markers.keys()]);
    const retired: RetiredUsage[] = [];
    for (const name of gone) {
      if (keep.has(name)) continue;
      const used = this.#counters.get(name)?.used ?? 0;
      retired.push({ name, used, periodStart: this.#markers.get(name) });
      this.#counters.delete(name);
      this.#markers.delete(name);
      this.#epochs.delete(name);
    }
    return retired;
  }

  snapshot(): QuotaSnapshot {
    const entries = new Map<string, QuotaEntry>();
    for (const [name, periodStart] of this.#markers) {
      entries.set(name, { used: this.#counters.get(name)?.used ?? 0, periodStart });
    }
    return entries;
  }

  #counterOf(name: string): LocalCounter {
    let counter = this.#counters.get(name);
    if (counter === undefined) {
      counter = new LocalCounter(name);
      this.#counters.set(name, counter);
    }
    return counter;
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
