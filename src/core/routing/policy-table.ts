/**
 * Per-method routing policies, compiled once per config load into an array indexed by method
 * id, so a request finds its policy with one array load. The default `cost` policy is one
 * shared object: a request whose method has nothing special runs exactly the path it always did.
 */
import { methodRouting, shippedRouting } from '../config/routing-section.js';
import type { RoutingConfig, RoutingStrategy } from '../config/types.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { isSignedTransactionMethod } from '../protocol/write-methods.js';
import { HedgeBudget } from './hedge-budget.js';

/** How one method's requests are routed. */
export interface RoutePolicy {
  readonly strategy: RoutingStrategy;
  /** Index of `strategy` in STRATEGY_LABELS (metrics). */
  readonly strategyIndex: number;
  /** Walk fastest-first rather than cheapest tier first. */
  readonly byLatency: boolean;
  /** Reads: a second attempt after this many ms without an answer; undefined = never. */
  readonly hedgeAfterMs: number | undefined;
  /** A write: retried only when surely undelivered, unless `signed`. */
  readonly write: boolean;
  /** A signed transaction: its identity is computed locally, so a resend is harmless. */
  readonly signed: boolean;
  /** Writes: nodes sent to at once. */
  readonly broadcast: number;
  /** Takes the write or hedge strategy from the start (not the plain first attempt). */
  readonly special: boolean;
}

/** The `strategy` label index of cascade_strategy_attempts_total (metrics STRATEGY_LABELS). */
export function strategyIndexOf(latency: boolean): number {
  return latency ? 1 : 0;
}

function policy(
  strategy: RoutingStrategy,
  hedgeAfterMs: number | undefined,
  write: boolean,
  signed: boolean,
  broadcast: number,
): RoutePolicy {
  return Object.freeze({
    strategy,
    strategyIndex: strategyIndexOf(strategy === 'latency'),
    byLatency: strategy === 'latency',
    hedgeAfterMs: write ? undefined : hedgeAfterMs,
    write,
    signed: write && signed,
    broadcast: write ? broadcast : 1,
    special: write || hedgeAfterMs !== undefined,
  });
}

/** Today's rule: cheapest tier first, one attempt at a time. */
export const COST_POLICY: RoutePolicy = policy('cost', undefined, false, false, 1);

/** The compiled policies of one config, and the hedge cap they share. */
export class PolicyTable {
  readonly #byId: RoutePolicy[] = [];
  readonly #default: RoutePolicy;
  readonly hedges: HedgeBudget;

  constructor(routing: RoutingConfig | undefined, registry: MethodRegistry) {
    const config = routing ?? shippedRouting();
    this.#default =
      config.defaultStrategy === 'cost'
        ? COST_POLICY
        : policy('latency', undefined, false, false, 1);
    this.hedges = new HedgeBudget(config.hedgeMaxShare);
    const writes = new Set(config.writeMethods);
    for (const name of new Set([...config.methods.keys(), ...writes])) {
      const { strategy, hedgeAfterMs, broadcast } = methodRouting(config, name);
      const write = writes.has(name);
      const compiled = policy(
        strategy,
        hedgeAfterMs,
        write,
        isSignedTransactionMethod(name),
        broadcast,
      );
      // Ids are append-only, so interning a name only a policy mentions is harmless.
      this.#byId[registry.intern(name)] =
        compiled.strategy === 'cost' && !compiled.special ? COST_POLICY : compiled;
    }
  }

  /** The policy of method `id` (any id, unknown ones included). */
  of(id: number): RoutePolicy {
    return this.#byId[id] ?? this.#default;
  }
}
