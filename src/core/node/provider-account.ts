/**
 * A provider account at run time (`[[accounts]]`, issue 28): the one credit pool and the one
 * set of limits every node billed to it draws from, on every chain. A node admits work only
 * when its account does too (routing/eligibility.ts); whatever a node books, its account books
 * as well (BilledUsage), so the pool always equals the sum of what its nodes were charged.
 */
import type { Clock } from '../clock.js';
import type { AccountConfig } from '../config/types.js';
import { ProviderLimits } from './provider-limits.js';
import type { UsageCounter } from './upstream-node.js';

export class ProviderAccount extends ProviderLimits {
  readonly name: string;
  #config: AccountConfig;

  constructor(
    config: AccountConfig,
    /** The account's pool in the usage ledger (`account:NAME`). */
    readonly usage: UsageCounter,
    clock: Clock,
  ) {
    super(config.rpsLimit, config.maxConcurrent, clock);
    this.name = config.name;
    this.#config = config;
  }

  get config(): AccountConfig {
    return this.#config;
  }

  /** Whether the pool is past its spillover threshold (every node of it is skipped). */
  get overQuota(): boolean {
    return this.usage.used > this.#config.spilloverThreshold;
  }

  /** Applies a reloaded config, keeping tokens earned, permits in flight and usage. */
  reconfigure(config: AccountConfig, now: number): void {
    this.#config = config;
    this.applyLimits(config.rpsLimit, config.maxConcurrent, now);
  }
}

/** A node's usage slot that books into its account's pool as well (refunds included). */
export class BilledUsage implements UsageCounter {
  constructor(
    readonly own: UsageCounter,
    readonly account: ProviderAccount,
  ) {}

  get used(): number {
    return this.own.used;
  }

  add(credits: number): void {
    this.own.add(credits);
    this.account.usage.add(credits);
  }

  save(credits: number): void {
    this.own.save?.(credits);
  }
}
