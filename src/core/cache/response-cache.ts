/**
 * The cache and in-flight coalescing in front of routing. A request whose method has a policy
 * is keyed by method and canonical params (one proxy serves one chain, so the chain is implied)
 * and then either answered from the store (`hit`), attached to an identical request in flight
 * (`coalesced`), or routed as the leader (`miss`) whose answer `land` stores when its rule
 * allows and hands to the waiters. Everything else is one failed Map lookup (`bypass`).
 */
import { ChainState } from '../chain/chain-state.js';
import type { CacheConfig } from '../config/types.js';
import { CacheResult, NOOP_CACHE_METRICS, type CacheMetrics } from '../metrics.js';
import { memberValueSpan, trimmedSpan, type Span } from '../protocol/json-spans.js';
import { AnswerStore, type StoredAnswer } from './answer-store.js';
import { compilePolicy, samePolicy, NO_CACHE_CONFIG, type MethodPolicy } from './cache-policy.js';
import { isFinal } from './cacheable.js';
import { canonicalParams } from './canonical-params.js';
import { Flight, type SharedAnswer } from './flight.js';

/** How the cache met a request that has a policy. */
export type CacheLookup =
  | { readonly kind: 'hit'; readonly answer: StoredAnswer }
  | { readonly kind: 'wait'; readonly flight: Flight }
  | { readonly kind: 'lead'; readonly flight: Flight };

const UTF8_JSON = 'application/json';

/** The response cache and coalescer of one proxy. */
export class ResponseCache {
  #config: CacheConfig;
  #policies: Map<string, MethodPolicy>;
  readonly #store: AnswerStore;
  readonly #flights = new Map<string, Flight>();
  /** The one chain tracker (routing's): where the finalized head comes from. */
  readonly #chain: ChainState;
  readonly #metrics: CacheMetrics;
  readonly #other: number;

  constructor(
    config: CacheConfig | undefined,
    metrics: CacheMetrics = NOOP_CACHE_METRICS,
    writes: readonly string[] = [],
    chain: ChainState = new ChainState(),
  ) {
    this.#config = config ?? NO_CACHE_CONFIG;
    this.#metrics = metrics;
    this.#other = metrics.method('other');
    this.#policies = compilePolicy(this.#config, (method) => metrics.method(method), writes);
    this.#store = new AnswerStore(this.#config.enabled ? this.#config.maxBytes : 0);
    this.#chain = chain;
    metrics.setSource(() => ({ bytes: this.#store.bytes, entries: this.#store.entries }));
  }

  /** Whether answers carry `x-cascade-cache`. */
  get responseHeader(): boolean {
    return this.#config.responseHeader;
  }

  /** Bytes and entries held now. */
  get size(): { readonly bytes: number; readonly entries: number } {
    return { bytes: this.#store.bytes, entries: this.#store.entries };
  }

  /** The chain tracker the finalized head is read from. */
  get chain(): ChainState {
    return this.#chain;
  }

  /** The finalized EVM block the chain tracker knows (undefined while unknown). */
  evmFinalizedBlock(now: number): number | undefined {
    const block = this.#chain.evmFinalizedBlock(this.#config.evmFinalityDepth, now);
    return block < 0 ? undefined : block;
  }

  /** The policy of `method`, or undefined (counted as a bypass) when it has none. */
  policyOf(method: string): MethodPolicy | undefined {
    // With caching and coalescing off nothing has a policy: no hash of the method name.
    const policies = this.#policies;
    const policy = policies.size === 0 ? undefined : policies.get(method);
    if (policy === undefined) this.#metrics.count(this.#other, CacheResult.bypass);
    return policy;
  }

  /** Counts a request of `policy` that cannot be keyed (a notification, odd params). */
  bypass(policy: MethodPolicy): void {
    this.#metrics.count(policy.series, CacheResult.bypass);
  }

  /**
   * Looks up the request object at `span` of `source`: a stored answer, a flight to wait on,
   * or a flight to lead (then `land` must follow). Undefined: route it untouched.
   */
  lookup(
    policy: MethodPolicy,
    source: Uint8Array,
    span: Span,
    now: number,
  ): CacheLookup | undefined {
    const params = canonicalParams(source, span);
    if (params === undefined) {
      this.bypass(policy);
      return undefined;
    }
    const key = `${policy.method}\n${params}`;
    if (policy.cache !== 'never') {
      const answer = this.#store.get(key, now);
      if (answer !== undefined) {
        this.#metrics.count(policy.series, CacheResult.hit);
        return { kind: 'hit', answer };
      }
    }
    if (!policy.coalesce) {
      this.#metrics.count(policy.series, CacheResult.miss);
      return { kind: 'lead', flight: new Flight(key, policy, params) };
    }
    const flying = this.#flights.get(key);
    if (flying !== undefined) {
      this.#metrics.count(policy.series, CacheResult.coalesced);
      return { kind: 'wait', flight: flying };
    }
    this.#metrics.count(policy.series, CacheResult.miss);
    const flight = new Flight(key, policy, params);
    this.#flights.set(key, flight);
    return { kind: 'lead', flight };
  }

  /**
   * The leader's answer (undefined when routing gave none, or streamed it): stores it when its
   * rule allows, and hands it to every waiter (who route on their
   * own when it cannot be shared). Returns what was shared. The finalized head is not
   * learned here: routing records every answer's head in the one ChainState, read by isFinal.
   */
  land(
    flight: Flight,
    status: number,
    contentType: string | undefined,
    body: Buffer | undefined,
    now: number,
  ): SharedAnswer | undefined {
    if (this.#flights.get(flight.key) === flight) this.#flights.delete(flight.key);
    const policy = flight.policy;
    // The common coalescable read: nobody waited and nothing may be stored — skip the scans.
    if (flight.waiters.length === 0 && policy.cache === 'never') return undefined;
    const shared =
      body !== undefined && status >= 200 && status < 300
        ? this.#share(flight, contentType ?? UTF8_JSON, body, now)
        : undefined;
    for (const waiter of flight.waiters) waiter.landed(shared);
    return shared;
  }

  /** Applies a reloaded `[cache]`: new rules, bound and depth; answers whose rule changed go. */
  reconfigure(config: CacheConfig | undefined, writes: readonly string[] = []): void {
    const before = this.#policies;
    this.#config = config ?? NO_CACHE_CONFIG;
    this.#policies = compilePolicy(this.#config, (method) => this.#metrics.method(method), writes);
    const after = this.#policies;
    this.#store.dropMethods((method) => !samePolicy(before.get(method), after.get(method)));
    this.#store.resize(this.#config.enabled ? this.#config.maxBytes : 0);
  }

  #share(flight: Flight, contentType: string, body: Buffer, now: number): SharedAnswer | undefined {
    const whole = trimmedSpan(body);
    // Only a plain success is shared: an error may be this node's state rather than the
    // request's, so each waiter then tries on its own.
    if (memberValueSpan(body, whole, 'error') !== null) return undefined;
    const resultSpan = memberValueSpan(body, whole, 'result');
    const idSpan = memberValueSpan(body, whole, 'id');
    if (!resultSpan || !idSpan) return undefined;
    const shared: SharedAnswer = { body, idSpan, contentType };
    const policy = flight.policy;
    if (policy.cache === 'never') return shared;
    // "null": a lookup that may still appear (a receipt not mined yet) is never stored.
    if (resultSpan.end - resultSpan.start === 4 && body[resultSpan.start] === 0x6e) return shared;
    if (body.length > this.#config.maxEntryBytes) return shared;
    if (policy.cache === 'final') {
      const result = parseSpan(body, resultSpan);
      const params = flight.params === '' ? undefined : (JSON.parse(flight.params) as unknown);
      const head = this.evmFinalizedBlock(now);
      if (policy.finality === undefined || !isFinal(policy.finality, params, result, head))
        return shared;
    }
    const expiresAt = policy.cache === 'ttl' ? now + policy.ttlMs : Infinity;
    this.#store.set(flight.key, policy.method, body, idSpan, contentType, expiresAt);
    return shared;
  }
}

function parseSpan(body: Buffer, span: Span): unknown {
  try {
    return JSON.parse(body.toString('utf8', span.start, span.end)) as unknown;
  } catch {
    return undefined;
  }
}
