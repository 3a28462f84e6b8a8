/**
 * A provider's rate and concurrency limits as one process enforces them: a token bucket, a
 * pool of permits, this process's share of both when several processes enforce them together
 * (workers, replicas), and the demand the split of shares reads. A node has them; so has a
 * provider account, whose limits every node billed to it must pass too.
 */
import type { Clock } from '../clock.js';
import { Permits } from './permits.js';
import { TokenBucket } from './token-bucket.js';

/** How soon a request facing a zero rate share looks again (shares change every sync). */
const SHARE_RECHECK_MS = 25;

export class ProviderLimits {
  /** Undefined when there is no rate limit (the limiter is skipped entirely). */
  #bucket: TokenBucket | undefined;
  readonly permits: Permits;
  /** Requests that reached the rate check since the last `takeDemand` (demand). */
  wanted = 0;
  /** Requests turned away (or left waiting) for want of a permit since the last `takeDemand`. */
  crowded = 0;
  /** This process's share of the limits, when it enforces them together with others. */
  #share: { readonly rps: number; readonly concurrent: number } | undefined = undefined;
  #rpsLimit: number;
  #inFlightCap: number;

  constructor(rpsLimit: number, inFlightCap: number, clock: Clock) {
    this.#rpsLimit = rpsLimit;
    this.#inFlightCap = inFlightCap;
    this.permits = new Permits(inFlightCap, clock);
    this.#bucket = Number.isFinite(rpsLimit) ? new TokenBucket(rpsLimit, clock.now()) : undefined;
  }

  /** Takes a rate token: 0 when taken, else ms until the next one. */
  takeToken(now: number): number {
    if (this.#bucket === undefined) return 0;
    const wait = this.#bucket.tryTake(now);
    // A share of 0 (a replica just joined, or the fleet's demand moved elsewhere) never refills
    // by itself; the next split may grant some, so look again soon rather than give up.
    return wait === Infinity && this.#share !== undefined ? SHARE_RECHECK_MS : wait;
  }

  /** Returns the token the last `takeToken` took (a second limit refused the work). */
  giveBackToken(): void {
    this.#bucket?.giveBack();
  }

  /**
   * Enforce only `rps` and `concurrent` of the configured limits here: the rest belongs to the
   * other workers or replicas (never more than the configured limit).
   */
  setShare(rps: number, concurrent: number, now: number): void {
    this.#share = { rps, concurrent };
    this.applyLimits(this.#rpsLimit, this.#inFlightCap, now);
  }

  /** Demand since the last call: requests that wanted a rate token, and the most in flight. */
  takeDemand(): { readonly rps: number; readonly concurrent: number } {
    const rps = this.wanted;
    const crowded = this.crowded;
    this.wanted = this.crowded = 0;
    return { rps, concurrent: this.permits.takePeak() + crowded };
  }

  /** Applies configured limits (a reload), within this process's share; tokens earned are kept. */
  protected applyLimits(rpsLimit: number, inFlightCap: number, now: number): void {
    this.#rpsLimit = rpsLimit;
    this.#inFlightCap = inFlightCap;
    const rps = Math.min(rpsLimit, this.#share?.rps ?? Infinity);
    if (!Number.isFinite(rpsLimit)) this.#bucket = undefined;
    else if (this.#bucket) this.#bucket.reconfigure(rps, now);
    else this.#bucket = new TokenBucket(rps, now);
    this.permits.setMax(Math.min(inFlightCap, this.#share?.concurrent ?? Infinity));
  }
}
