import { NodeHeads } from '../chain/chain-state.js';
import type { Clock } from '../clock.js';
import type { NodeConfig } from '../config/types.js';
import type { NodeMetrics } from '../metrics.js';
import type { DeadlineQueue } from './deadline-queue.js';
import { HttpTransport } from './http-transport.js';
import { LatencyEma } from './latency-ema.js';
import { LogsLimits } from './logs-limits.js';
import { Penalty } from './penalty.js';
import { BilledUsage, type ProviderAccount } from './provider-account.js';
import { ProviderLimits } from './provider-limits.js';

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
export class UpstreamNode extends ProviderLimits {
  readonly name: string;
  #config: NodeConfig;
  /** The provider account it is billed to (its pool and limits apply too): see `bill`. */
  account: ProviderAccount | undefined = undefined;
  readonly penalty = new Penalty();
  readonly ema = new LatencyEma();
  /** Its usage slot: its own counter, or one that books its account's pool too. */
  usage: UsageCounter;
  /** Its own counter in the ledger (what quotas.json keeps under its name). */
  readonly ownUsage: UsageCounter;
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
  readonly #deps: NodeDeps;

  constructor(config: NodeConfig, usage: UsageCounter, metrics: NodeMetrics, deps: NodeDeps) {
    super(config.rpsLimit, inFlightCap(config), deps.clock);
    this.name = config.name;
    this.heads = new NodeHeads(config.name);
    this.#config = config;
    this.#deps = deps;
    this.usage = this.ownUsage = usage;
    this.metrics = metrics;
    this.#transport = transportFor(config, deps);
  }

  get config(): NodeConfig {
    return this.#config;
  }

  get transport(): HttpTransport {
    return this.#transport;
  }

  /** Bills the node to `account` (undefined: to none): its bookings reach the pool too. */
  bill(account: ProviderAccount | undefined): void {
    this.account = account;
    this.usage = account === undefined ? this.ownUsage : new BilledUsage(this.ownUsage, account);
  }

  /** Applies a reloaded config, keeping runtime state. Returns the old transport if replaced. */
  reconfigure(config: NodeConfig, now: number): HttpTransport | undefined {
    const previous = this.#config;
    this.#config = config;
    this.applyLimits(config.rpsLimit, inFlightCap(config), now);
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
