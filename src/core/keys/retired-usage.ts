/**
 * The usage of keys no longer in force: a `[[keys]]` entry removed by a reload (or absent at a
 * start while quotas.json still holds it) keeps what it spent this period, so an entry put back
 * under the same name does not start its budget over — removing and re-adding a key is no way
 * to refill it. Kept in memory and written to quotas.json as `key:NAME`, as a key in force is.
 */
import { periodStart } from '../quota/billing-period.js';
import type { QuotaEntry } from '../quota/usage-ledger.js';

/** A retired key's usage, and its reset day when known (a removal at runtime). */
interface Retired extends QuotaEntry {
  readonly resetDay: number | undefined;
}

/** Removed keys' usage of their last period, by key name. */
export class RetiredUsage {
  readonly #byName = new Map<string, Retired>();

  constructor(private readonly wallNow: () => number) {}

  /** Keeps `entry` for the key `name` (removed, or not in force at a start). */
  keep(name: string, entry: QuotaEntry, resetDay?: number): void {
    this.#byName.set(name, { used: entry.used, periodStart: entry.periodStart, resetDay });
  }

  /** Hands back (and forgets) what the key `name` spent, for an entry of that name put back. */
  take(name: string): QuotaEntry | undefined {
    const entry = this.#byName.get(name);
    if (entry !== undefined) this.#byName.delete(name);
    return entry;
  }

  /**
   * The entries still worth keeping, by name: one whose period ended (its reset day known) is
   * forgotten, as the budget it counted against starts over anyway.
   */
  entries(): Array<readonly [string, QuotaEntry]> {
    const today = new Date(this.wallNow());
    const kept: Array<readonly [string, QuotaEntry]> = [];
    for (const [name, entry] of this.#byName) {
      if (entry.resetDay !== undefined && periodStart(today, entry.resetDay) !== entry.periodStart)
        this.#byName.delete(name);
      else kept.push([name, { used: entry.used, periodStart: entry.periodStart }]);
    }
    return kept;
  }
}
