/**
 * Single requests through the response cache (core/cache) on their way to routing: a hit is
 * answered at once, an identical request in flight is waited on, anything else is routed —
 * the leader's answer then lands in the cache and reaches its waiters. Answers are the
 * upstream's bytes with the client's own id spliced in. A waiter whose leader got no shareable
 * answer routes on its own with what is left of its budget: the leader started first with the
 * same budget, so waiting never takes a request past its own deadline.
 */
import type { Flight, FlightWaiter, SharedAnswer } from '../cache/flight.js';
import { withClientId } from '../cache/flight.js';
import type { ResponseCache } from '../cache/response-cache.js';
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import { trimmedSpan } from '../protocol/json-spans.js';
import { NO_ID, requestIdOf, type RpcRequest } from '../protocol/rpc-request.js';
import type { RouteCallback, RouteContext, RouteResult } from '../routing/route-context.js';
import { route } from '../routing/route.js';

/** The cache in front of routing; `cache` undefined = route everything untouched. */
export interface CachedRouteContext {
  readonly route: RouteContext;
  readonly cache: ResponseCache | undefined;
}

/**
 * Books what an answer given without an upstream saved: the price the first node in walk order
 * that serves the method would have charged (metrics, and the node's usage record).
 */
export function bookSaved(ctx: CachedRouteContext, methodId: number): void {
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

function cachedAnswer(body: Buffer, contentType: string, cache: 'hit' | 'coalesced'): RouteResult {
  return {
    kind: 'answer',
    status: 200,
    contentType,
    body,
    node: 'cache',
    attempts: 0,
    credits: 0,
    cache,
  };
}

/** A single request waiting on an identical one in flight. */
class SingleWaiter<T> implements FlightWaiter {
  constructor(
    readonly request: RpcRequest,
    readonly idText: string,
    readonly headers: ForwardHeaders,
    readonly ctx: CachedRouteContext,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
    readonly deadline: number,
  ) {}

  landed(answer: SharedAnswer | undefined): void {
    if (answer !== undefined) {
      bookSaved(this.ctx, this.request.methodId);
      this.onRouted(
        cachedAnswer(withClientId(answer, this.idText), answer.contentType, 'coalesced'),
        this.token,
      );
      return;
    }
    const routeCtx = this.ctx.route;
    const left = this.deadline - routeCtx.clock.now();
    if (left <= 0) {
      this.onRouted({ kind: 'timeout', attempts: 0, credits: 0 }, this.token);
      return;
    }
    route(this.request, this.headers, { ...routeCtx, budgetMs: left }, this.onRouted, this.token);
  }
}

/** The leader of a flight: lands its answer in the cache, then answers its own client. */
class Leader<T> {
  constructor(
    readonly flight: Flight,
    readonly cache: ResponseCache,
    readonly ctx: CachedRouteContext,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
  ) {}
}

function onLeaderRouted(result: RouteResult, leader: Leader<unknown>): void {
  try {
    const body = result.kind === 'answer' && Buffer.isBuffer(result.body) ? result.body : undefined;
    const status = result.kind === 'answer' ? result.status : 0;
    const contentType = result.kind === 'answer' ? result.contentType : undefined;
    leader.cache.land(leader.flight, status, contentType, body, leader.ctx.route.clock.now());
  } finally {
    leader.onRouted(result.kind === 'answer' ? { ...result, cache: 'miss' } : result, leader.token);
  }
}

/** Routes one parsed request through the cache; `onRouted` hears how it ended, exactly once. */
export function routeCached<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: CachedRouteContext,
  onRouted: RouteCallback<T>,
  token: T,
): void {
  const cache = ctx.cache;
  const policy = cache?.policyOf(request.method);
  if (cache === undefined || policy === undefined) {
    route(request, headers, ctx.route, onRouted, token);
    return;
  }
  const idText = requestIdOf(request);
  if (idText === NO_ID) {
    // A notification expects no answer: nothing to share or store.
    cache.bypass(policy);
    route(request, headers, ctx.route, onRouted, token);
    return;
  }
  const now = ctx.route.clock.now();
  const found = cache.lookup(policy, request.body, trimmedSpan(request.body), now);
  if (found === undefined) {
    route(request, headers, ctx.route, onRouted, token);
  } else if (found.kind === 'hit') {
    bookSaved(ctx, request.methodId);
    const answer = found.answer;
    onRouted(cachedAnswer(withClientId(answer, idText), answer.contentType, 'hit'), token);
  } else if (found.kind === 'wait') {
    const deadline = now + ctx.route.budgetMs;
    found.flight.waiters.push(
      new SingleWaiter(request, idText, headers, ctx, onRouted, token, deadline),
    );
  } else {
    const leader = new Leader(found.flight, cache, ctx, onRouted, token);
    route(request, headers, ctx.route, onLeaderRouted, leader as Leader<unknown>);
  }
}
