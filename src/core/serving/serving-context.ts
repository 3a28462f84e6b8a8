/**
 * What every door (an HTTP request, an HTTP batch, a WebSocket message, a WebSocket batch)
 * hands the serving layer: the routing context and the response cache in front of it. Both
 * are the proxy's own — one cache and one set of flights for every door, so an answer stored
 * for an HTTP client serves a socket client and the other way round.
 */
import type { ResponseCache } from '../cache/response-cache.js';
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import type { RouteContext } from '../routing/route-context.js';

/** The cache in front of routing; `cache` undefined = route everything untouched. */
export interface ServingContext {
  readonly route: RouteContext;
  /** The response cache and coalescer (reconfigured in place on reload). */
  readonly cache: ResponseCache | undefined;
}

/**
 * Books what an answer given without an upstream saved: the price the first node in walk order
 * that serves the method would have charged (metrics, and the node's usage record).
 */
export function bookSaved(ctx: ServingContext, methodId: number): void {
  for (const node of ctx.route.table().ranked) {
    const price = priceOf(node.config.pricing, methodId);
    if (price === UNPRICED) continue;
    if (price > 0) {
      ctx.route.metrics.cache?.saved(node.name, price);
      node.usage.save?.(price);
    }
    return;
  }
}
