/**
 * Failed key checks, limited per client IP: a flood of guessed keys from one address is
 * answered 429 before its keys are even hashed, so it cannot buy CPU away from keyed traffic
 * nor guess at any useful rate. Each address has a bucket of failures; while it is empty the
 * address is refused.
 */
import { TokenBucket } from '../node/token-bucket.js';

/** Failed checks per second one address may make after its burst. */
export const FAILED_CHECKS_PER_SECOND = 2;
/** Failed checks one address may make at once (a misconfigured client retrying a few times). */
export const FAILED_CHECKS_BURST = 20;
/** Addresses remembered; past it the table starts over (bounded memory under a spread flood). */
const MAX_ADDRESSES = 50_000;

/** Per-address failure buckets. */
export class FailedChecks {
  readonly #byIp = new Map<string, TokenBucket>();
  readonly #rate: number;
  readonly #burst: number;

  /**
   * `parts`: how many processes split the allowance (the workers of `--workers N`, which take
   * an address's connections in turn): each allows its share, the proxy the whole.
   */
  constructor(parts = 1) {
    this.#rate = FAILED_CHECKS_PER_SECOND / parts;
    this.#burst = Math.max(1, Math.round(FAILED_CHECKS_BURST / parts));
  }

  /** Ms until `ip` may be checked again; 0 = now. */
  waitOf(ip: string, now: number): number {
    const bucket = this.#byIp.get(ip);
    if (bucket === undefined) return 0;
    const available = bucket.available(now);
    return available >= 1 ? 0 : ((1 - available) * 1000) / this.#rate;
  }

  /** Records one failed check from `ip`. */
  failed(ip: string, now: number): void {
    let bucket = this.#byIp.get(ip);
    if (bucket === undefined) {
      if (this.#byIp.size >= MAX_ADDRESSES) this.#byIp.clear();
      bucket = new TokenBucket(this.#rate, now, this.#burst);
      this.#byIp.set(ip, bucket);
    }
    bucket.tryTake(now);
  }

  get size(): number {
    return this.#byIp.size;
  }
}
