/**
 * Usage shared with other processes (workers of one machine, replicas of a fleet) through a
 * store this process syncs with (the primary process, or Redis). A counter's `used` is what the
 * whole fleet booked as far as this process knows — the store's last acknowledged total, plus
 * what this process booked since — so the spillover threshold is judged on fleet usage, and
 * the request path still reads one number and books with one add, never waiting on the store.
 *
 * The acknowledged total is a floor: a store that lost data (Redis restarted empty) can never
 * make usage go backwards here, except across an epoch — a reset (billing period, or an
 * operator's `quota reset`) that the store announces by a new epoch number. The floor is sent
 * back with the store's *life* it was acknowledged in, so the store can tell a floor it lost
 * (heal it) from one it still holds (redis-scripts.ts).
 */
import {
  CounterLedger,
  type QuotaEntry,
  type QuotaSnapshot,
  type RetiredUsage,
  type UsageCounter,
  type UsageLedger,
} from './usage-ledger.js';

class SharedCounter implements UsageCounter {
  /** The store's last acknowledged fleet total (it includes what this process sent). */
  base = 0;
  /** Booked here, not sent yet. */
  pending = 0;
  /** Sent, not acknowledged yet. */
  sending = 0;
  /** Sent and acknowledged, in the period (with pending and sending: all booked here). */
  acknowledged = 0;
  epoch = 0;
  /** The store life `base` was acknowledged in; UNKNOWN_LIFE when restored from quotas.json. */
  life = UNKNOWN_LIFE;
  /** Saved by this process's cache (kept per process, not shared through the store). */
  saved = 0;
  /** Of `saved`, what a worker has not reported to its primary yet. */
  savedUnreported = 0;
  /** `pending` at which this counter asks for a sync ahead of the timer (see `armSync`). */
  syncAt = Infinity;
  /** Who is asked; set with `syncAt`. */
  onSyncDue: (() => void) | undefined = undefined;
  /** It asked, and no sync took the ask yet (`takeSyncAsk`). */
  syncAsked = false;

  constructor(readonly name: string) {}

  get used(): number {
    return this.base + this.pending + this.sending;
  }

  add(credits: number): void {
    this.pending += credits;
    if (this.pending >= this.syncAt) this.askSync();
  }

  /** Asks once, then stays quiet until armed again (a store that is down is not pestered). */
  askSync(): void {
    this.syncAt = Infinity;
    this.syncAsked = true;
    this.onSyncDue?.();
  }

  save(credits: number): void {
    this.saved += credits;
    this.savedUnreported += credits;
  }
}

/** A floor whose store life is not known (restored from quotas.json, or never synced). */
export const UNKNOWN_LIFE = '-';

/** One node's fleet total as the store acknowledged it. */
export interface SharedTotal {
  readonly used: number;
  /** Resets seen by the store; a new epoch makes a lower total legitimate. */
  readonly epoch: number;
  /** Which life of the store said it (Redis: its run_id); absent from a primary. */
  readonly life?: string;
}

/** A ledger whose counters track the fleet's usage through periodic syncs. */
export class SharedUsageLedger extends CounterLedger<SharedCounter> implements UsageLedger {
  /** The batch being sent (kept as it is until acknowledged), and its number. */
  #batch: Map<string, number> | undefined = undefined;
  /** Batch numbers start from the wall clock, above any earlier run's under the same name. */
  #seq = Date.now() * 1000;

  protected override newCounter(name: string): SharedCounter {
    return new SharedCounter(name);
  }

  /** A local reset (billing period, operator): starts a new epoch; unsent usage is dropped. */
  reset(name: string): void {
    const counter = this.counterOf(name);
    counter.base = counter.pending = counter.sending = counter.saved = 0;
    counter.acknowledged = 0;
    counter.epoch++;
  }

  epoch(name: string): number {
    return this.counters.get(name)?.epoch ?? 0;
  }

  restore(name: string, entry: QuotaEntry): void {
    const counter = this.counterOf(name);
    const unsent = entry.unsent ?? 0;
    counter.base = entry.used - unsent;
    counter.pending = unsent;
    counter.sending = counter.acknowledged = 0;
    counter.life = UNKNOWN_LIFE;
    counter.saved = entry.saved ?? 0;
    this.setPeriodStart(name, entry.periodStart);
  }

  retain(names: readonly string[]): RetiredUsage[] {
    const keep = new Set(names);
    const retired: RetiredUsage[] = [];
    for (const name of new Set([...this.counters.keys(), ...this.markers.keys()])) {
      if (keep.has(name)) continue;
      retired.push({
        name,
        used: this.counters.get(name)?.used ?? 0,
        periodStart: this.markers.get(name),
      });
      this.counters.delete(name);
      this.markers.delete(name);
    }
    return retired;
  }

  snapshot(): QuotaSnapshot {
    const entries = new Map<string, QuotaEntry>();
    for (const [name, periodStart] of this.markers) {
      const counter = this.counters.get(name);
      const unsent = counter === undefined ? 0 : counter.pending + counter.sending;
      const used = counter?.used ?? 0;
      const saved = counter?.saved ?? 0;
      entries.set(name, {
        used,
        periodStart,
        ...(unsent > 0 ? { unsent } : {}),
        ...(saved > 0 ? { saved } : {}),
      });
    }
    return entries;
  }

  /**
   * The batch of credits to send, numbered. A batch the store has not acknowledged is sent
   * again exactly as it was, under the same number — a reply that timed out may hide a batch
   * the store did apply, and the number lets it apply each batch once. Otherwise what was
   * booked since the last batch becomes the next one (number 0: nothing to send).
   */
  takeDeltas(): { readonly seq: number; readonly deltas: ReadonlyMap<string, number> } {
    if (this.#batch === undefined) {
      const deltas = new Map<string, number>();
      for (const counter of this.counters.values()) {
        if (counter.pending === 0) continue;
        deltas.set(counter.name, counter.pending);
        counter.sending += counter.pending;
        counter.pending = 0;
      }
      if (deltas.size === 0) return { seq: 0, deltas };
      this.#batch = deltas;
      this.#seq++;
    }
    return { seq: this.#seq, deltas: this.#batch };
  }

  /** Credits the cache saved per node since the last call (a worker reports them). */
  takeSaved(): Map<string, number> {
    const saved = new Map<string, number>();
    for (const counter of this.counters.values()) {
      if (counter.savedUnreported === 0) continue;
      saved.set(counter.name, counter.savedUnreported);
      counter.savedUnreported = 0;
    }
    return saved;
  }

  /** The store applied the outstanding batch (after `settle` for each node). */
  acknowledge(): void {
    this.#batch = undefined;
  }

  /** The highest fleet total acknowledged for `name` (sent to the store to heal lost data). */
  floor(name: string): number {
    return this.counters.get(name)?.base ?? 0;
  }

  /** The store life `floor(name)` was acknowledged in (UNKNOWN_LIFE before any). */
  floorLife(name: string): string {
    return this.counters.get(name)?.life ?? UNKNOWN_LIFE;
  }

  /**
   * The store acknowledged what was sent: `total` is the fleet's usage including it. Within an
   * epoch usage never goes backwards; a new epoch (a reset elsewhere) is taken as it comes.
   */
  settle(name: string, total: SharedTotal): void {
    const counter = this.counterOf(name);
    if (total.epoch !== counter.epoch) {
      counter.epoch = total.epoch;
      counter.base = total.used;
    } else {
      counter.base = Math.max(counter.base + counter.sending, total.used);
    }
    counter.acknowledged += counter.sending;
    counter.sending = 0;
    if (total.life !== undefined) counter.life = total.life;
  }

  /** Every credit booked here for `name` in its period (the pace of the reserve). */
  bookedHere(name: string): number {
    const counter = this.counters.get(name);
    return counter === undefined ? 0 : counter.acknowledged + counter.sending + counter.pending;
  }

  /** True when everything booked here has been acknowledged by the store. */
  allAcknowledged(): boolean {
    if (this.#batch !== undefined) return false;
    for (const counter of this.counters.values()) if (counter.pending !== 0) return false;
    return true;
  }

  /**
   * Calls `due` (once) when `name` has `pending` or more credits booked and not yet sent — the
   * coordinator's early sync, before its reserve runs out (reservation-pace.ts).
   */
  armSync(name: string, pending: number, due: () => void): void {
    const counter = this.counterOf(name);
    counter.syncAt = pending;
    counter.onSyncDue = due;
    counter.syncAsked = false;
    if (counter.pending >= pending) counter.askSync();
  }

  /**
   * True when `name` asked for a sync since this was last called; the sync that calls it
   * answers the ask (a sync that fails leaves the counter unarmed until one succeeds, so a
   * store that is down is not asked again and again).
   */
  takeSyncAsk(name: string): boolean {
    const counter = this.counters.get(name);
    if (counter === undefined || !counter.syncAsked) return false;
    counter.syncAsked = false;
    return true;
  }

  /** Credits booked here the store has not acknowledged, per node (for metrics). */
  unflushed(name: string): number {
    const counter = this.counters.get(name);
    return counter === undefined ? 0 : counter.pending + counter.sending;
  }
}
