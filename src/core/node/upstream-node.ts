import { NodeHeads } from '../chain/chain-state.js';
import type { Clock } from '../clock.js';
import type { NodeConfig } from '../config/types.js';
import type { NodeMetrics } from '../metrics.js';
import type { DeadlineQueue } from './deadline-queue.js';
import { HttpTransport } from './http-transport.js';
import { LatencyEma } from './latency-ema.js';
import { LogsLimits } from './logs-limits.js';
import { Penalty } from './penalty.js';
import { Permits } from './permits.js';
import { TokenBucket } from './token-bucket.js';

/** The usage slot a node books credits into (implemented by the quota ledger). */
export interface UsageCounter {
  readonly used: number;
  add(credits: number): void;
  /** Records credits the cache or coalescing saved this node (optional: not every ledger keeps it). */
  save?(credits: number): void;
}

/** What every node of a server shares: its clock and its queue of attempt deadlines. */
export interface NodeDeps {
  readonly clock: Clock;
  readonly deadlines: DeadlineQueue;
}

/** Attempts a node may have in flight: its max_concurrent, and never more than its connections. */
export function inFlightCap(config: NodeConfig): number {
  return Math.min(config.maxConcurrent, config.maxConnections);
}

function transportFor(config: NodeConfig, deps: NodeDeps): HttpTransport {
  return new HttpTransport(config.url, {
    maxConnections: inFlightCap(config),
    keepAliveMs: config.keepAliveMs,
    deadlines: deps.deadlines,
    headers: config.headers,
  });
}

/** Whether two nodes send the same configured headers. */
function sameHeaders(a: NodeConfig, b: NodeConfig): boolean {
  if (a.headers === b.headers) return true;
  const names = Object.keys(a.headers);
  if (names.length !== Object.keys(b.headers).length) return false;
  return names.every((name) => a.headers[name] === b.headers[name]);
}

/**
 * Everything cascade knows about one upstream: its current config, rate limiter, permits,
 * penalty, latency EMA, usage slot and connection pool. The object lives as long as the node's
 * name stays in the config, so a reload keeps its limiter, in-flight count, EMA and penalty.
 */
/** How soon a request facing a zero rate share looks again (shares change every sync). */
const SHARE_RECHECK_MS = 25;

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
  /** Its heads as its answers showed them (chain/chain-state.ts); kept across reloads. */
  readonly heads: NodeHeads;
  /**
   * Set by an operator (admin API): the node takes no new requests, in-flight ones finish.
   * Kept across reloads that keep the node; a restart clears it.
   */
  cordoned = false;
  /** Attempts answered or failed so far, and how many of them failed (the admin view samples them). */
  attempts = 0;
  failures = 0;
  /** Why the node was last penalized (for the admin view). */
  penaltyReason = '';
  /**
   * Set when the node answered a well-formed batch with a single -32700/-32600 error (it does
   * not take batches): it is then sent one element per attempt. Cleared when its URL changes.
   */
  refusesBatches = false;
  /** eth_getLogs limits its errors taught (issue 29); kept across reloads, not URL changes. */
  readonly logsLimits = new LogsLimits();
  /** Requests that reached this node's rate check since the last `takeDemand` (demand). */
  wanted = 0;
  /** Requests turned away (or left waiting) for want of a permit since the last `takeDemand`. */
  crowded = 0;
  /** This process's share of the limits, when it enforces them together with others. */
  #share: { readonly rps: number; readonly concurrent: number } | undefined = undefined;
  readonly #deps: NodeDeps;

  constructor(config: NodeConfig, usage: UsageCounter, metrics: NodeMetrics, deps: NodeDeps) {
    this.name = config.name;
    this.heads = new NodeHeads(config.name);
    this.#config = config;
    this.#deps = deps;
    this.usage = usage;
    this.metrics = metrics;
    this.permits = new Permits(inFlightCap(config), deps.clock);
    this.#bucket = Number.isFinite(config.rpsLimit)
      ? new TokenBucket(config.rpsLimit, deps.clock.now())
      : undefined;
    this.#transport = transportFor(config, deps);
  }

  get config(): NodeConfig {
    return this.#config;
  }

  get transport(): HttpTransport {
    return this.#transport;
  }

  /** Takes a rate token: 0 when taken, else ms until the next one. */
  takeToken(now: number): number {
    if (this.#bucket === undefined) return 0;
    const wait = this.#bucket.tryTake(now);
    // A share of 0 (a replica just joined, or the fleet's demand moved elsewhere) never refills
    // by itself; the next split may grant some, so look again soon rather than give up.
    return wait === Infinity && this.#share !== undefined ? SHARE_RECHECK_MS : wait;
  }

  /**
   * Enforce only `rps` and `concurrent` of the configured limits here: the rest belongs to the
   * other workers or replicas (never more than the configured limit).
   */
  setShare(rps: number, concurrent: number, now: number): void {
    this.#share = { rps, concurrent };
    this.#applyLimits(now);
  }

  /** Demand since the last call: requests that wanted a rate token, and the most in flight. */
  takeDemand(): { readonly rps: number; readonly concurrent: number } {
    const rps = this.wanted;
    const crowded = this.crowded;
    this.wanted = this.crowded = 0;
    return { rps, concurrent: this.permits.takePeak() + crowded };
  }

  #applyLimits(now: number): void {
    const config = this.#config;
    const rps = Math.min(config.rpsLimit, this.#share?.rps ?? Infinity);
    if (!Number.isFinite(config.rpsLimit)) this.#bucket = undefined;
    else if (this.#bucket) this.#bucket.reconfigure(rps, now);
    else this.#bucket = new TokenBucket(rps, now);
    this.permits.setMax(Math.min(inFlightCap(config), this.#share?.concurrent ?? Infinity));
  }

  /** Applies a reloaded config, keeping runtime state. Returns the old transport if replaced. */
  reconfigure(config: NodeConfig, now: number): HttpTransport | undefined {
    const previous = this.#config;
    this.#config = config;
    this.#applyLimits(now);
    if (
      previous.url === config.url &&
      inFlightCap(previous) === inFlightCap(config) &&
      previous.keepAliveMs === config.keepAliveMs &&
      sameHeaders(previous, config)
    )
      return undefined;
    if (previous.url !== config.url) {
      this.refusesBatches = false;
      this.logsLimits.clear();
    }
    const old = this.#transport;
    this.#transport = transportFor(config, this.#deps);
    return old;
  }
}
