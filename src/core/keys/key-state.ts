/**
 * One client key's state while cascade runs: its limits (from `[[keys]]`, replaced in place on
 * reload), its rate buckets and requests in flight (key-limits.ts) and its credits this
 * billing period. The checks run in a fixed order — revoked, origin, method, params, per-IP rate, key rate,
 * concurrency, budget — and the first that fails is the answer; a call that passes reserves
 * one concurrency slot and the cheapest price of its method until it settles.
 */
import type { ClientKeyConfig } from '../config/key-types.js';
import type { UsageCounter } from '../quota/usage-ledger.js';
import { nextReset, periodInForce, periodStart } from '../quota/billing-period.js';
import { KeyLimits } from './key-limits.js';
import {
  REVOKED_KEY,
  budgetRefused,
  methodRefused,
  originRefused,
  type KeyRefusal,
} from './key-refusal.js';
import { MethodGlobs } from './method-globs.js';

/** A key's usage as saved: credits this period and the period's first day. */
export interface KeyUsage {
  readonly used: number;
  readonly periodStart: string;
}

function guardsParams(config: ClientKeyConfig): boolean {
  return (
    Object.keys(config.params).length > 0 || Object.keys(config.requiredFilters ?? {}).length > 0
  );
}

/** One key, live. */
export class KeyState {
  config: ClientKeyConfig;
  methods: MethodGlobs;
  /** The key guards some method's params (`params` or `required_filters`): a call's are read. */
  guardsParams: boolean;
  /** Refused at once, on every door (`key revoke`): set from ClientKeys' book of changes. */
  revoked = false;
  /** The budget an operator set at runtime (`key budget`); undefined = the config's. */
  budgetOverride: number | undefined;
  /** Rate, concurrency and per-IP limits (this process's share of them, when shared). */
  readonly limits: KeyLimits;
  /** Credits booked this period, including reservations of calls in flight (see `shared`). */
  #used = 0;
  /**
   * With workers or replicas sharing usage (the primary, Redis): the key's counter in the
   * shared ledger (the fleet's total, as nodes' counters are); settled credits are booked there, and `used` is
   * that total plus this process's reservations. Undefined: usage lives here alone.
   */
  #shared: UsageCounter | undefined;
  /** Of `used`, what calls in flight reserved and have not settled. */
  reservedNow = 0;
  periodStart = '';
  #periodEndsAt = -Infinity;
  /** Calls allowed (the common outcome: a field, not a Map update per call). */
  #allowed = 0;
  /** Calls refused, by reason. */
  readonly #refused = new Map<string, number>();

  constructor(
    config: ClientKeyConfig,
    now: number,
    private readonly wallNow: () => number,
  ) {
    this.config = config;
    this.methods = new MethodGlobs(config.allow, config.deny);
    this.guardsParams = guardsParams(config);
    this.limits = new KeyLimits(config, now);
    // The period starts now, so usage booked before any budget check counts in it.
    this.#rollPeriod();
  }

  get name(): string {
    return this.config.name;
  }

  /** Calls admitted and not settled yet. */
  get inFlight(): number {
    return this.limits.inFlight;
  }

  /** Credits booked this period, including reservations of calls in flight. */
  get used(): number {
    return this.#shared === undefined ? this.#used : this.#shared.used + this.reservedNow;
  }

  /** Books settled usage in `counter` from now on (workers or replicas sharing usage). */
  share(counter: UsageCounter): void {
    this.#shared = counter;
  }

  /** Whether usage is the fleet's, kept in the shared ledger (saved and reset there). */
  get shared(): boolean {
    return this.#shared !== undefined;
  }

  /** The budget in force; undefined = none. */
  get budget(): number | undefined {
    return this.budgetOverride ?? this.config.monthlyCredits;
  }

  /** Takes a reloaded entry of the same name: limits change, usage and buckets stay. */
  reconfigure(config: ClientKeyConfig, now: number): void {
    const before = this.config;
    this.config = config;
    this.guardsParams = guardsParams(config);
    if (before.allow.join() !== config.allow.join() || before.deny.join() !== config.deny.join())
      this.methods = new MethodGlobs(config.allow, config.deny);
    this.limits.reconfigure(config, now);
    if (config.resetDay !== before.resetDay) this.#periodEndsAt = -Infinity;
  }

  count(outcome: string): void {
    if (outcome === 'allowed') this.#allowed++;
    else this.#refused.set(outcome, (this.#refused.get(outcome) ?? 0) + 1);
  }

  /** Calls by outcome (`allowed` or a refusal reason): rpc_key_requests_total. */
  get counts(): ReadonlyMap<string, number> {
    const counts = new Map<string, number>();
    if (this.#allowed > 0) counts.set('allowed', this.#allowed);
    for (const [reason, count] of this.#refused) counts.set(reason, count);
    return counts;
  }

  /** Whether pages of `origin` may use the key (no list: any caller). */
  allowsOrigin(origin: string | undefined): boolean {
    const origins = this.config.origins;
    return (
      origin === undefined ||
      origins.length === 0 ||
      origins.includes(origin) ||
      origins.includes('*')
    );
  }

  /**
   * The checks a call must pass (params are the caller's: they need the body). `cheapest` is
   * the lowest price any node asks for the method (0 when none prices it). On success the
   * call holds a slot and `cheapest` reserved until `settle`.
   */
  admit(
    method: string,
    ip: string,
    origin: string | undefined,
    now: number,
    cheapest: number,
  ): KeyRefusal | undefined {
    const config = this.config;
    if (this.revoked) return REVOKED_KEY;
    if (!this.allowsOrigin(origin)) return originRefused(config.name, origin!);
    if (!this.methods.allows(method)) return methodRefused(config.name, method);
    const limited = this.limits.check(ip, now);
    if (limited !== undefined) return limited;
    const budget = this.budget;
    if (budget !== undefined) {
      this.#rollPeriod();
      // The call that would pass the budget is refused: at least the cheapest price must fit.
      if (this.used + cheapest > budget || (cheapest === 0 && this.used >= budget)) {
        this.limits.refund(ip);
        return this.#budgetRefusal(budget, method, cheapest);
      }
    }
    this.limits.acquire();
    this.#used += cheapest;
    this.reservedNow += cheapest;
    return undefined;
  }

  /**
   * Reserves `extra` credits more for a call already admitted (a planned eth_getLogs split,
   * priced whole before its first chunk): false, reserving nothing, when the budget cannot
   * hold it. Settle with what the call reserved in all.
   */
  reserveMore(extra: number): boolean {
    const budget = this.budget;
    if (budget !== undefined) {
      this.#rollPeriod();
      if (this.used + extra > budget) return false;
    }
    this.#used += extra;
    this.reservedNow += extra;
    return true;
  }

  /** A call admitted with `reserved` ended having cost `credits` (0 for cache answers). */
  settle(reserved: number, credits: number): void {
    this.settleMany(1, reserved, credits);
  }

  /** `count` admitted calls (batch elements) reserved `reserved` together and cost `credits`. */
  settleMany(count: number, reserved: number, credits: number): void {
    this.limits.release(count);
    this.reservedNow -= reserved;
    this.#used += credits - reserved;
    if (this.#shared !== undefined && credits > 0) this.#shared.add(credits);
  }

  /** Usage now (the period rolled first), for quotas.json and the operator. */
  usage(): KeyUsage {
    this.#rollPeriod();
    return { used: this.used, periodStart: this.periodStart };
  }

  /**
   * Restores saved usage unless its period has ended (then it starts at 0), by the nodes' rule:
   * a saved period that starts on or after the current one (the same period, or a reset_day
   * moved since, or a clock gone back) keeps its usage and its start.
   */
  restore(saved: KeyUsage): void {
    this.#rollPeriod();
    if (!periodInForce(saved.periodStart, this.periodStart)) return;
    this.#used = saved.used;
    this.periodStart = saved.periodStart;
  }

  /** Zeroes the period's usage (`cascade quota reset --key`; shared usage: see ClientKeys). */
  reset(): void {
    this.#rollPeriod();
    this.#used = 0;
  }

  /** Why `method` (at least `cheapest`) does not fit `budget`: kept out of admit, which inlines. */
  #budgetRefusal(budget: number, method: string, cheapest: number): KeyRefusal {
    const shortfall = {
      key: this.config.name,
      budget,
      setAtRuntime: this.budgetOverride !== undefined,
      used: this.used,
      cheapest,
      method,
      resetDay: this.#nextResetDay(),
    };
    return budgetRefused(shortfall, this.wallNow());
  }

  /** The first day of the next period. */
  nextResetDay(): string {
    this.#rollPeriod();
    return this.#nextResetDay();
  }

  #nextResetDay(): string {
    return nextReset(this.periodStart, this.config.resetDay);
  }

  /** A new billing period starts the budget over; one Date.now() per budgeted call. */
  #rollPeriod(): void {
    const wall = this.wallNow();
    if (wall < this.#periodEndsAt) return;
    const start = periodStart(new Date(wall), this.config.resetDay);
    // Only a period after the one in force starts the budget over (as for nodes): a reset_day
    // moved so that the current period began earlier keeps its usage until the next reset.
    if (!periodInForce(this.periodStart, start)) {
      // Calls in flight keep their reservations; they settle into the new period.
      // (Shared usage rolls over in the ledger, as nodes' does.)
      this.#used = this.reservedNow;
      this.periodStart = start;
    }
    this.#periodEndsAt = Date.parse(`${nextReset(start, this.config.resetDay)}T00:00:00Z`);
  }
}
