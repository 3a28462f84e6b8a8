/**
 * The client keys in force, and the one check every door makes first: which key a call
 * presents. The presented key is hashed with SHA-256 once and looked up by its hash — one hash
 * and one Map lookup per call, and a comparison whose time says nothing about how much of a
 * guess was right. With no keys configured `enabled` is false and no door does anything else.
 */
import { hash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { KEY_USAGE_PREFIX } from '../config/key-exposure.js';
import type { ClientKeyConfig, KeysConfig } from '../config/key-types.js';
import type { KeySample } from '../metrics.js';
import { keyUsageName } from './key-periods.js';
import type { QuotaEntry, QuotaSnapshot, UsageLedger } from '../quota/usage-ledger.js';
import { FailedChecks } from './failed-checks.js';
import type { KeyDemand, KeyShare } from './key-limits.js';
import {
  KeyOverrideBook,
  budgetField,
  budgetOverride,
  budgetValue,
  revokeField,
  type KeyOverrides,
  type SavedOverride,
} from './key-overrides.js';
import { NO_KEY, REVOKED_KEY, UNKNOWN_KEY, failedChecks, type KeyRefusal } from './key-refusal.js';
import { ConnectionKeys } from './connection-keys.js';
import { KeyState } from './key-state.js';
import { RetiredUsage } from './retired-usage.js';

/** Who a call is: a key, a keyless caller (undefined, when keys are optional), or a refusal. */
export type Identified = KeyState | KeyRefusal | undefined;

/** The keys of one process (every door of it shares them). */
export class ClientKeys {
  /** Keys are configured or required: doors identify callers. False = cascade is open. */
  enabled = false;
  readonly requireKey: boolean;
  #byHash = new Map<string, KeyState>();
  #byName = new Map<string, KeyState>();
  /** Each connection's last key (a keep-alive connection's repeat skips the hash). */
  readonly #connections = new ConnectionKeys();
  #failed = new FailedChecks();
  /** What keys removed this period spent (one server alone: shared usage is the ledger's). */
  readonly #retired: RetiredUsage;
  /** Told after the keys in force changed (the WebSocket side re-checks its open sessions). */
  readonly #listeners = new Set<() => void>();
  /** Calls without a usable key, by outcome (`keyless`, `no_key`, `unknown_key`, …). */
  readonly unkeyed = new Map<string, number>();
  /** The operator's runtime changes (revoke, budget): this process's, or the fleet's. */
  readonly book = new KeyOverrideBook();
  /**
   * Workers or replicas: the shared ledger keys' usage is counted in (the primary's, or the one
   * synced with Redis), and the fleet-wide reset.
   */
  #shared:
    { readonly ledger: UsageLedger; readonly reset: (name: string) => Promise<void> } | undefined;

  constructor(
    keys: KeysConfig | undefined,
    requireKey: boolean,
    private readonly clock: Clock,
    private readonly wallNow: () => number = Date.now,
  ) {
    this.requireKey = requireKey;
    this.#retired = new RetiredUsage(wallNow);
    this.reconfigure(keys);
  }

  /** Puts a (re)loaded key list in force; keys kept by name keep their usage and buckets. */
  reconfigure(keys: KeysConfig | undefined): void {
    const now = this.clock.now();
    const byHash = new Map<string, KeyState>();
    const byName = new Map<string, KeyState>();
    for (const config of keys?.keys ?? []) {
      let state = this.#byName.get(config.name);
      if (state === undefined) state = this.#newKey(config, now);
      else state.reconfigure(config, now);
      // A revoke names the secret (a rotation is not revoked); a runtime budget, the config's.
      this.#applyBook(state);
      if (this.#shared !== undefined && !state.shared)
        state.share(this.#shared.ledger.counter(keyUsageName(config.name)));
      byHash.set(config.sha256, state);
      byName.set(config.name, state);
    }
    // A key removed keeps what it spent this period, for an entry of its name put back.
    for (const [name, state] of this.#byName)
      if (!byName.has(name) && !state.shared)
        this.#retired.keep(name, unreservedUsage(state), state.config.resetDay);
    this.#byHash = byHash;
    this.#byName = byName;
    this.enabled = this.requireKey || byName.size > 0;
    this.#changed();
  }

  /** A key new to this process: one removed earlier this period comes back with its usage. */
  #newKey(config: ClientKeyConfig, now: number): KeyState {
    const state = new KeyState(config, now, this.wallNow);
    const retired = this.#retired.take(config.name);
    if (retired !== undefined && this.#shared === undefined) state.restore(retired);
    return state;
  }

  /**
   * Calls `listener` after every change of the keys in force — a reload, a rotation, a removal,
   * a revoke or its undoing, here or from the fleet — so a door that admitted a caller once (an
   * open WebSocket) can check it again. Returns what takes the listener off.
   */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Who `presented` is now, for a connection that passed with it before the keys changed: hashed
   * and looked up as `identify` does, but counted as no failed check of its address (the caller
   * guessed nothing: the operator changed the key under it).
   */
  recheck(presented: string | undefined): KeyState | KeyRefusal {
    return presented === undefined ? NO_KEY : this.#lookup(presented);
  }

  /** The key `presented` is, by its SHA-256: unknown, revoked, or the key. */
  #lookup(presented: string): KeyState | KeyRefusal {
    // crypto.hash: one call, no Hash object (a third of createHash's cost for a key's length).
    const state = this.#byHash.get(hash('sha256', presented, 'hex'));
    if (state === undefined) return UNKNOWN_KEY;
    return state.revoked ? REVOKED_KEY : state;
  }

  /** One of `parts` workers: this process allows its share of each address's failed checks. */
  splitFailedChecks(parts: number): void {
    this.#failed = new FailedChecks(parts);
  }

  /**
   * Counts every key's usage in `ledger` from now on — the ledger shared with the primary of
   * `--workers` or with replicas through Redis, where keys are more counters beside the nodes'
   * (synced, saved in quotas.json and healed as theirs are). `reset` zeroes a counter
   * fleet-wide (`quota reset --key`).
   */
  shareUsage(ledger: UsageLedger, reset: (name: string) => Promise<void>): void {
    this.#shared = { ledger, reset };
    for (const state of this.#byName.values())
      if (!state.shared) state.share(ledger.counter(keyUsageName(state.name)));
  }

  /** This process's share of the limits of the key counted as `usageName` (`key:NAME`). */
  applyShare(usageName: string, share: KeyShare): void {
    this.byUsageName(usageName)?.limits.setShare(share, this.clock.now());
  }

  /** What the key counted as `usageName` wanted since the last call (undefined: not a key). */
  takeDemand(usageName: string): KeyDemand | undefined {
    return this.byUsageName(usageName)?.limits.takeDemand();
  }

  /** Every limited key's demand since the last call, by usage name (a worker's report). */
  demands(): Array<readonly [string, KeyDemand]> {
    const demands: Array<readonly [string, KeyDemand]> = [];
    for (const state of this.#byName.values())
      if (state.limits.limited) demands.push([keyUsageName(state.name), state.limits.takeDemand()]);
    return demands;
  }

  /** Zeroes a key's usage this period: here alone, or fleet-wide when it is shared. */
  async resetUsage(state: KeyState): Promise<void> {
    if (state.shared && this.#shared !== undefined)
      await this.#shared.reset(keyUsageName(state.name));
    else state.reset();
  }

  /**
   * The caller of a request presenting `presented` (undefined: no key) from `ip`, on
   * `connection` (its socket, when the door has one: the key it passed with is remembered).
   * `source` is the object the key was read from when that object stands for the key's text
   * alone (a path's hit, which a connection gets again only for the same path).
   */
  identify(
    presented: string | undefined,
    ip: string,
    connection?: object,
    source?: object,
  ): Identified {
    if (presented === undefined) return this.requireKey ? NO_KEY : undefined;
    // No address has failed a check yet (the common case): no clock read, no lookup.
    const wait = this.#failed.size === 0 ? 0 : this.#failed.waitOf(ip, this.clock.now());
    if (wait > 0) return failedChecks(wait);
    if (connection !== undefined) {
      const known = this.#connections.known(connection, presented, source);
      if (known !== undefined) return known;
    }
    const state = this.#lookup(presented);
    if (!(state instanceof KeyState)) {
      this.#failed.failed(ip, this.clock.now());
      return state;
    }
    if (connection !== undefined) this.#connections.remember(connection, presented, state, source);
    return state;
  }

  /** Counts a call that came with no usable key (rpc_key_requests_total{key=""}). */
  countUnkeyed(outcome: string): void {
    this.unkeyed.set(outcome, (this.unkeyed.get(outcome) ?? 0) + 1);
  }

  /** Every key's usage as quotas.json entries (`key:NAME`), beside the nodes'. */
  usageSnapshot(): QuotaSnapshot {
    const entries = new Map<string, QuotaEntry>();
    for (const state of this.#byName.values()) {
      // Shared usage is the ledger's, written with the nodes'.
      if (state.shared) continue;
      entries.set(`${KEY_USAGE_PREFIX}${state.name}`, unreservedUsage(state));
    }
    if (this.#shared === undefined)
      for (const [name, entry] of this.#retired.entries())
        entries.set(`${KEY_USAGE_PREFIX}${name}`, entry);
    return entries;
  }

  /** Restores every key's usage from quotas.json entries (a past period's start over at 0). */
  restoreUsage(saved: QuotaSnapshot): void {
    for (const state of this.#byName.values()) {
      if (state.shared) continue;
      const entry = saved.get(`${KEY_USAGE_PREFIX}${state.name}`);
      if (entry !== undefined) state.restore(entry);
    }
    if (this.#shared !== undefined) return;
    // Keys the file holds and the config no longer has: kept, should they come back.
    for (const [usageName, entry] of saved) {
      if (!usageName.startsWith(KEY_USAGE_PREFIX)) continue;
      const name = usageName.slice(KEY_USAGE_PREFIX.length);
      if (!this.#byName.has(name)) this.#retired.keep(name, entry);
    }
  }

  /** What /metrics shows of every key now (and of calls with no usable key, name ""). */
  samples(): KeySample[] {
    const keyed = [...this.#byName.values()].map((state) => ({
      name: state.name,
      counts: state.counts,
      used: state.usage().used - state.reservedNow,
      budget: state.budget,
    }));
    return [{ name: '', counts: this.unkeyed, used: 0, budget: undefined }, ...keyed];
  }

  /** Every key in force, in config order. */
  list(): KeyState[] {
    return [...this.#byName.values()];
  }

  byName(name: string): KeyState | undefined {
    return this.#byName.get(name);
  }

  /** The key whose usage goes by `usageName` (`key:NAME`), if it is one of these keys. */
  byUsageName(usageName: string): KeyState | undefined {
    return usageName.startsWith(KEY_USAGE_PREFIX)
      ? this.#byName.get(usageName.slice(KEY_USAGE_PREFIX.length))
      : undefined;
  }

  /**
   * Takes Redis's clock as read by a sync (replicas): changes made here are stamped on it from
   * then on (key-overrides.ts `align`); `offset` is Redis's clock minus this process's.
   */
  alignToFleetClock(offset: number): void {
    const now = this.wallNow();
    this.book.align(now + offset, now);
  }

  /** This process's wall clock (ms), as it stamps changes before any offset. */
  wallClock(): number {
    return this.wallNow();
  }

  /** Revokes the key's secret (or takes the revoke back): in force here at once. */
  setRevoked(state: KeyState, revoked: boolean): void {
    this.book.set(
      revokeField(state.name, state.config.sha256),
      revoked ? '1' : '0',
      this.wallNow(),
    );
    if (this.#applyBook(state)) this.#changed();
  }

  /** Sets the key's budget at runtime (undefined: the config's `monthly_credits` again). */
  setBudget(state: KeyState, credits: number | undefined): void {
    this.book.set(
      budgetField(state.name),
      budgetValue(credits, state.config.monthlyCredits),
      this.wallNow(),
    );
    this.#applyBook(state);
  }

  /** The operator's changes, to hand to another process (the primary's, to a worker). */
  overrides(): KeyOverrides {
    return this.book.entries();
  }

  /** Takes the operator's changes as another process holds them (the primary's, to a worker). */
  applyOverrides(overrides: KeyOverrides): void {
    this.book.replace(overrides);
    this.refresh();
  }

  /** Takes the operator's changes this process saved before it restarted (key-changes-file.ts). */
  restoreChanges(saved: readonly SavedOverride[]): void {
    this.book.restore(saved);
    this.refresh();
  }

  /** Puts the book in force on every key (after the fleet's sync changed it). */
  refresh(): void {
    let changed = false;
    for (const state of this.#byName.values()) changed = this.#applyBook(state) || changed;
    if (changed) this.#changed();
  }

  /** Puts the book in force on `state`; true when that revoked it or took a revoke back. */
  #applyBook(state: KeyState): boolean {
    const revoked = this.book.value(revokeField(state.name, state.config.sha256)) === '1';
    const changed = revoked !== state.revoked;
    state.revoked = revoked;
    state.budgetOverride = budgetOverride(
      this.book.value(budgetField(state.name)),
      state.config.monthlyCredits,
    );
    return changed;
  }

  /** The keys in force changed: remembered connections hash again, listeners re-check. */
  #changed(): void {
    this.#connections.forgetAll();
    for (const listener of this.#listeners) listener();
  }
}

/** A key's usage to save: reservations of calls in flight are not credits spent yet. */
function unreservedUsage(state: KeyState): QuotaEntry {
  const { used, periodStart } = state.usage();
  return { used: Math.max(0, used - state.reservedNow), periodStart };
}

/** Narrows what `identify` returned. */
export function isRefusal(identified: Identified): identified is KeyRefusal {
  return identified !== undefined && !(identified instanceof KeyState);
}
