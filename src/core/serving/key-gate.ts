/**
 * The key check of every door (issue 27), in one place below the transports: an HTTP request,
 * each element of an HTTP batch, a WebSocket request, each element of a WebSocket batch and a
 * WebSocket subscription all pass here before the cache or routing sees them. A refused call
 * never reaches a node, books no node credit and leaves every node's health alone.
 *
 * A call that passes reserves the cheapest price any node asks for its method (so the call
 * that would pass the budget is refused before it is routed) and settles, once it is answered,
 * to what it cost: the credits of the node(s) that served it, nothing for a cache hit or a
 * coalesced answer.
 */
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import { filtersRefused } from '../keys/heavy-read-refusal.js';
import { paramsRefused, type KeyRefusal } from '../keys/key-refusal.js';
import { hasRequiredFilter } from '../keys/required-filters.js';
import type { KeyState } from '../keys/key-state.js';
import type { RouteCallback, RouteResult } from '../routing/route-context.js';
import { capAnswer } from './answer-cap.js';
import type { ServingContext } from './serving-context.js';

/** Who sends a call: its key, and where from (per-IP limits, browser origins). */
export interface KeyedCaller {
  readonly key: KeyState;
  readonly ip: string;
  /** The `Origin` a browser sent; undefined outside browsers. */
  readonly origin: string | undefined;
}

/** The lowest price any node asks for `methodId` now; 0 when no node prices it. */
export function cheapestPrice(ctx: ServingContext, methodId: number): number {
  let cheapest = Infinity;
  for (const node of ctx.route.table().ranked) {
    const price = priceOf(node.config.pricing, methodId);
    if (price !== UNPRICED && price < cheapest) cheapest = price;
  }
  return cheapest === Infinity ? 0 : cheapest;
}

/**
 * The key's guards of `method`'s params (`params`: the first param must be listed;
 * `required_filters`: one of the listed filters must be given), or undefined when they pass.
 */
function guardRefusal(
  key: KeyState,
  method: string,
  params: () => unknown,
): KeyRefusal | undefined {
  if (!key.guardsParams) return undefined;
  const allowed = key.config.params[method];
  const required = key.config.requiredFilters?.[method];
  if (allowed === undefined && required === undefined) return undefined;
  let list: unknown;
  try {
    list = params();
  } catch {
    return allowed === undefined
      ? filtersRefused(key.name, method, required!)
      : paramsRefused(key.name, method);
  }
  if (allowed !== undefined) {
    const first = Array.isArray(list) ? (list[0] as unknown) : undefined;
    if (typeof first !== 'string' || !allowed.includes(first))
      return paramsRefused(key.name, method);
  }
  if (required !== undefined && !hasRequiredFilter(list, required)) {
    return filtersRefused(key.name, method, required);
  }
  return undefined;
}

/**
 * Checks one call of `caller`; returns the credits reserved (admitted: settle it once) or the
 * refusal. `params` reads the call's params, asked only when the key guards the method.
 */
export function admitCall(
  caller: KeyedCaller,
  method: string,
  methodId: number,
  params: () => unknown,
  ctx: ServingContext,
): number | KeyRefusal {
  const key = caller.key;
  // Only a key's rate buckets read the time: a key without limits skips the clock.
  const now = key.limits.limited ? ctx.route.clock.now() : 0;
  const cheapest = key.budget === undefined ? 0 : cheapestPrice(ctx, methodId);
  let refusal = key.admit(method, caller.ip, caller.origin, now, cheapest);
  if (refusal === undefined) {
    refusal = guardRefusal(key, method, params);
    if (refusal !== undefined) key.settle(cheapest, 0);
  }
  key.count(refusal === undefined ? 'allowed' : refusal.reason);
  return refusal ?? cheapest;
}

/**
 * Checks a subscribe call of `caller` (methods, params, rates, a budget not yet spent). It holds
 * no concurrency slot and books nothing to the key: its credits are the node's socket traffic,
 * shared by every client of the subscription.
 */
export function admitSubscription(
  caller: KeyedCaller,
  method: string,
  methodId: number,
  params: readonly unknown[],
  ctx: ServingContext,
): KeyRefusal | undefined {
  const admitted = admitCall(caller, method, methodId, () => params, ctx);
  if (typeof admitted !== 'number') return admitted;
  caller.key.settle(admitted, 0);
  return undefined;
}

/** How a refused call ends, as routing results are read by every door. */
export function refusedResult(refusal: KeyRefusal): RouteResult {
  return { kind: 'refused', refusal, attempts: 0, credits: 0 };
}

/**
 * What a call may spend beyond the cheapest price its key reserved when admitted: a planned
 * eth_getLogs split reserves its whole cost before the first chunk is sent.
 */
export interface CallBudget {
  /** Reserves up to `credits` for the call in all: false when the key's budget cannot hold it. */
  reserveUpTo(credits: number): boolean;
  /** The key, for the refusal's words: its name, what is left, its budget. */
  readonly key: KeyState;
  /** What the call holds reserved now (part of the key's `used`). */
  readonly reserved: number;
}

/** An admitted single call on its way: settles its key when the answer comes back. */
export class KeyedCall<T> implements CallBudget {
  constructor(
    readonly key: KeyState,
    public reserved: number,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
  ) {}

  reserveUpTo(credits: number): boolean {
    const extra = credits - this.reserved;
    if (extra <= 0) return true;
    if (!this.key.reserveMore(extra)) return false;
    this.reserved = credits;
    return true;
  }
}

/**
 * Where a keyed call's routing ends: the key is settled, then the door hears the result — or,
 * past the key's `max_answer_bytes`, a refusal instead of the answer (serving/answer-cap.ts).
 */
export function settleKeyed(result: RouteResult, call: KeyedCall<unknown>): void {
  call.key.settle(call.reserved, result.credits);
  const cap = call.key.config.maxAnswerBytes;
  if (cap === undefined || result.kind !== 'answer') return call.onRouted(result, call.token);
  capAnswer(result, cap, call.key.name).then(
    (capped) => call.onRouted(capped, call.token),
    (err: unknown) =>
      call.onRouted(
        { kind: 'failed', error: err, attempts: result.attempts, credits: result.credits },
        call.token,
      ),
  );
}
