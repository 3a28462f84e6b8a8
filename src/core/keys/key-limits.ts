/**
 * A key's rate and concurrency limits in this process: `rps_limit` (a token bucket, burst = the
 * limit), `max_concurrent`, and `per_ip_rps` (one bucket per client address). When several
 * processes serve one key — the workers of `--workers N`, the replicas on one Redis — each
 * enforces only its *share* of every limit (`setShare`), split between them by demand exactly
 * as nodes' limits are (cluster/shares.ts), so together they never pass the configured limit;
 * `takeDemand` is what this process tells the split it wanted. `per_ip_rps` is split with the
 * key's request demand: every process gives any one address at most its share, so the shares
 * of one address add up to the limit at most.
 */
import type { ClientKeyConfig } from '../config/key-types.js';
import { TokenBucket } from '../node/token-bucket.js';
import { concurrencyRefused, rateRefused, type KeyRefusal } from './key-refusal.js';

/** Per-IP buckets one browser key keeps at most (then the table starts over). */
const MAX_IPS_PER_KEY = 50_000;
/** Retry-After for a share of 0: the next split (every 50–100 ms) may grant some. */
const SHARE_RECHECK_MS = 1000;

/** This process's share of a key's limits (Infinity: the whole limit, or none). */
export interface KeyShare {
  readonly rps: number;
  readonly concurrent: number;
  readonly perIp: number;
}

/** What a key wanted since the last `takeDemand`: rate tokens, and the most in flight. */
export interface KeyDemand {
  readonly rps: number;
  readonly concurrent: number;
}

/** One key's limits in this process. */
export class KeyLimits {
  #config: ClientKeyConfig;
  #share: KeyShare | undefined;
  #bucket: TokenBucket | undefined;
  #maxConcurrent = Infinity;
  #perIpRate: number | undefined;
  readonly #perIp = new Map<string, TokenBucket>();
  /** Calls admitted and not settled. */
  inFlight = 0;
  /** Calls that reached the limits since the last `takeDemand` (rate demand). */
  #wanted = 0;
  /** The most in flight, and calls refused for concurrency, since the last `takeDemand`. */
  #peak = 0;
  #crowded = 0;

  constructor(config: ClientKeyConfig, now: number) {
    this.#config = config;
    this.#apply(now);
  }

  /** The share in force (undefined: this process alone enforces the whole limits). */
  get share(): KeyShare | undefined {
    return this.#share;
  }

  /** Whether the key has any limit here (unlimited keys report no demand). */
  get limited(): boolean {
    const config = this.#config;
    return (
      config.rpsLimit !== undefined ||
      config.maxConcurrent !== undefined ||
      config.perIpRps !== undefined
    );
  }

  /** Takes a reloaded entry: new limits (within the share in force), buckets kept. */
  reconfigure(config: ClientKeyConfig, now: number): void {
    const perIpBefore = this.#config.perIpRps;
    this.#config = config;
    if (config.perIpRps !== perIpBefore) this.#perIp.clear();
    this.#apply(now);
  }

  /** Enforce only this share of the configured limits here (the rest is other processes'). */
  setShare(share: KeyShare, now: number): void {
    this.#share = share;
    this.#apply(now);
  }

  /**
   * Per-IP rate, key rate, then concurrency, for a call from `ip`: a refusal, or undefined
   * (the call may go on to the budget; `acquire` once admitted).
   */
  check(ip: string, now: number): KeyRefusal | undefined {
    this.#wanted++;
    const config = this.#config;
    const perIpRate = this.#perIpRate;
    let ipBucket: TokenBucket | undefined;
    if (perIpRate !== undefined) {
      ipBucket = this.#ipBucket(ip, perIpRate, now);
      const wait = ipBucket.tryTake(now);
      if (wait > 0) return rateRefused(config.name, config.perIpRps!, retryIn(wait), true);
    }
    if (this.#bucket !== undefined) {
      const wait = this.#bucket.tryTake(now);
      if (wait > 0) {
        ipBucket?.giveBack();
        return rateRefused(config.name, config.rpsLimit!, retryIn(wait), false);
      }
    }
    if (this.inFlight >= this.#maxConcurrent) {
      this.#crowded++;
      // A refused call spends no rate: the tokens it took go back.
      this.refund(ip);
      return concurrencyRefused(config.name, config.maxConcurrent!);
    }
    return undefined;
  }

  /**
   * Gives back the rate tokens a call took in `check` when a later check refused it after all
   * (its concurrency, its budget): only served calls spend the key's rate.
   */
  refund(ip: string): void {
    if (this.#perIpRate !== undefined) this.#perIp.get(ip)?.giveBack();
    this.#bucket?.giveBack();
  }

  /** An admitted call holds a slot until `release`. */
  acquire(): void {
    if (++this.inFlight > this.#peak) this.#peak = this.inFlight;
  }

  release(count: number): void {
    this.inFlight -= count;
  }

  /** Demand since the last call (the weights of the next split). */
  takeDemand(): KeyDemand {
    const demand = { rps: this.#wanted, concurrent: this.#peak + this.#crowded };
    this.#wanted = this.#crowded = 0;
    this.#peak = this.inFlight;
    return demand;
  }

  #apply(now: number): void {
    const config = this.#config;
    const share = this.#share;
    if (config.rpsLimit === undefined) this.#bucket = undefined;
    else {
      const rps = Math.min(config.rpsLimit, share?.rps ?? Infinity);
      if (this.#bucket === undefined) this.#bucket = new TokenBucket(rps, now);
      else this.#bucket.reconfigure(rps, now);
    }
    this.#maxConcurrent = Math.min(config.maxConcurrent ?? Infinity, share?.concurrent ?? Infinity);
    this.#perIpRate =
      config.perIpRps === undefined
        ? undefined
        : Math.min(config.perIpRps, share?.perIp ?? Infinity);
  }

  #ipBucket(ip: string, rate: number, now: number): TokenBucket {
    let bucket = this.#perIp.get(ip);
    if (bucket === undefined) {
      if (this.#perIp.size >= MAX_IPS_PER_KEY) this.#perIp.clear();
      bucket = new TokenBucket(rate, now);
      this.#perIp.set(ip, bucket);
    } else if (bucket.rate !== rate) {
      // The share moved: an address keeps the tokens it has, within the new rate.
      bucket.reconfigure(rate, now);
    }
    return bucket;
  }
}

/** Ms to say in Retry-After: a share of 0 never refills by itself, the next split may. */
function retryIn(wait: number): number {
  return wait === Infinity ? SHARE_RECHECK_MS : wait;
}
