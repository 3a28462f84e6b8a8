import type { NodeConfig } from '../config/types.js';
import type { NodeMetrics } from '../metrics.js';
import { HttpTransport } from './http-transport.js';
import { LatencyEma } from './latency-ema.js';
import { Penalty } from './penalty.js';
import { Permits } from './permits.js';
import { TokenBucket } from './token-bucket.js';

/** The usage slot a node books credits into (implemented by the quota ledger). */
export interface UsageCounter {
  readonly used: number;
  add(credits: number): void;
}

/**
 * Everything cascade knows about one upstream: its current config, rate limiter, permits,
 * penalty, latency EMA, usage slot and connection pool. The object lives as long as the node's
 * name stays in the config, so a reload keeps its limiter, in-flight count, EMA and penalty.
 */
export class UpstreamNode {
  readonly name: string;
  #config: NodeConfig;
  /** Undefined when the node has no rate limit (the limiter is skipped entirely). */
  #bucket: TokenBucket | undefined;
  readonly permits: Permits;
  readonly penalty = new Penalty();
  readonly ema = new LatencyEma();
  readonly usage: UsageCounter;
  readonly metrics: NodeMetrics;
  #transport: HttpTransport;
  /** Set when a reload removed the node: requests still walking an old table skip it. */
  retired = false;

  constructor(config: NodeConfig, usage: UsageCounter, metrics: NodeMetrics, now: number) {
    this.name = config.name;
    this.#config = config;
    this.usage = usage;
    this.metrics = metrics;
    this.permits = new Permits(config.maxConcurrent);
    this.#bucket = Number.isFinite(config.rpsLimit)
      ? new TokenBucket(config.rpsLimit, now)
      : undefined;
    this.#transport = new HttpTransport(config.url, config.maxConcurrent);
  }

  get config(): NodeConfig {
    return this.#config;
  }

  get transport(): HttpTransport {
    return this.#transport;
  }

  /** Takes a rate token: 0 when taken, else ms until the next one. */
  takeToken(now: number): number {
    return this.#bucket === undefined ? 0 : this.#bucket.tryTake(now);
  }

  /** Applies a reloaded config, keeping runtime state. Returns the old transport if replaced. */
  reconfigure(config: NodeConfig, now: number): HttpTransport | undefined {
    const previous = this.#config;
    this.#config = config;
    if (!Number.isFinite(config.rpsLimit)) {
      this.#bucket = undefined;
    } else if (this.#bucket) {
      this.#bucket.reconfigure(config.rpsLimit, now);
    } else {
      this.#bucket = new TokenBucket(config.rpsLimit, now);
    }
    this.permits.setMax(config.maxConcurrent);
    if (previous.url === config.url && previous.maxConcurrent === config.maxConcurrent)
      return undefined;
    const old = this.#transport;
    this.#transport = new HttpTransport(config.url, config.maxConcurrent);
    return old;
  }
}
