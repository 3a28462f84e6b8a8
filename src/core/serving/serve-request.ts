/**
 * A single request through the response cache (core/cache) on its way to routing, whichever
 * door it came in by: a hit is answered at once, an identical request in flight is waited on,
 * anything else is routed — the leader's answer then lands in the cache and reaches its
 * waiters. Answers are the upstream's bytes with the client's own id spliced in. A waiter whose
 * leader got no shareable answer routes on its own with what is left of its budget: the leader
 * started first with the same budget, so waiting never takes a request past its own deadline.
 *
 * This is the HTTP hot path (proxy-handler → serveRequest → route): callbacks with a token, no
 * promise and no closure; a method without a policy costs one Map lookup.
 */
import type { Flight, FlightWaiter, SharedAnswer } from '../cache/flight.js';
import { withClientId } from '../cache/flight.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import { trimmedSpan } from '../protocol/json-spans.js';
import { NO_ID, requestIdOf, type RpcRequest } from '../protocol/rpc-request.js';
import type { RouteCallback, RouteContext, RouteResult } from '../routing/route-context.js';
import { RequestRoute } from '../routing/request-route.js';
import { route } from '../routing/route.js';
import { KeyedCall, admitCall, refusedResult, settleKeyed, type KeyedCaller } from './key-gate.js';
import { LOGS_METHOD_ID, serveLogs } from './logs-split.js';
import { bookSaved, type ServingContext } from './serving-context.js';

/** How a request past the cache is routed: `route` (every door), or a split's chunk route. */
export type Router = <T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
  onRouted: RouteCallback<T>,
  token: T,
) => void;

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
    readonly ctx: ServingContext,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
    readonly deadline: number,
    readonly router: Router,
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
    this.router(
      this.request,
      this.headers,
      { ...routeCtx, budgetMs: left },
      this.onRouted,
      this.token,
    );
  }
}

/** The leader of a flight: lands its answer in the cache, then answers its own client. */
class Leader<T> {
  constructor(
    readonly flight: Flight,
    readonly cache: ResponseCache,
    readonly ctx: ServingContext,
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
    leader.onRouted(asMiss(result), leader.token);
  }
}

/** The leader's result, marked a cache miss for its client. */
function asMiss(result: RouteResult): RouteResult {
  if (result.kind !== 'answer') return result;
  // A routed answer is its request's own routing state (request-route.ts), which only this
  // leader holds: marked in place instead of copying its couple of dozen fields.
  if (result instanceof RequestRoute) {
    result.cache = 'miss';
    return result;
  }
  return { ...result, cache: 'miss' };
}

/**
 * Serves one parsed request through the key check (when it comes with a key: key-gate.ts) and
 * the cache; `onRouted` hears how it ended, exactly once.
 */
export function serveRequest<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: ServingContext,
  onRouted: RouteCallback<T>,
  token: T,
  caller?: KeyedCaller,
): void {
  if (caller === undefined) {
    // One compare for every other method: eth_getLogs may need its range split (issue 29).
    if (request.methodId === LOGS_METHOD_ID) {
      return serveLogs(request, headers, ctx, onRouted, token, undefined, serveOpen);
    }
    return serveOpen(request, headers, ctx, onRouted, token);
  }
  const admitted = admitCall(
    caller,
    request.method,
    request.methodId,
    () => paramsOf(request),
    ctx,
  );
  if (typeof admitted !== 'number') return onRouted(refusedResult(admitted), token);
  const call = new KeyedCall(caller.key, admitted, onRouted, token) as KeyedCall<unknown>;
  if (request.methodId === LOGS_METHOD_ID) {
    return serveLogs(request, headers, ctx, settleKeyed, call, call, serveOpen);
  }
  serveOpen(request, headers, ctx, settleKeyed, call);
}

function paramsOf(request: RpcRequest): unknown {
  return (JSON.parse(request.body.toString('utf8')) as { params?: unknown }).params;
}

/**
 * A request past the key check (or without one): the cache, coalescing, routing (by `router`:
 * `route`, or the chunk route of a split eth_getLogs).
 */
export function serveOpen<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: ServingContext,
  onRouted: RouteCallback<T>,
  token: T,
  router: Router = route,
): void {
  const cache = ctx.cache;
  const policy = cache?.policyOf(request.method);
  if (cache === undefined || policy === undefined) {
    router(request, headers, ctx.route, onRouted, token);
    return;
  }
  const idText = requestIdOf(request);
  if (idText === NO_ID) {
    // A notification expects no answer: nothing to share or store.
    cache.bypass(policy);
    router(request, headers, ctx.route, onRouted, token);
    return;
  }
  const now = ctx.route.clock.now();
  const found = cache.lookup(policy, request.body, trimmedSpan(request.body), now);
  if (found === undefined) {
    router(request, headers, ctx.route, onRouted, token);
  } else if (found.kind === 'hit') {
    bookSaved(ctx, request.methodId);
    const answer = found.answer;
    onRouted(cachedAnswer(withClientId(answer, idText), answer.contentType, 'hit'), token);
  } else if (found.kind === 'wait') {
    const deadline = now + ctx.route.budgetMs;
    found.flight.waiters.push(
      new SingleWaiter(request, idText, headers, ctx, onRouted, token, deadline, router),
    );
  } else {
    const leader = new Leader(found.flight, cache, ctx, onRouted, token);
    router(request, headers, ctx.route, onLeaderRouted, leader as Leader<unknown>);
  }
}

function resolveWith(result: RouteResult, resolve: (result: RouteResult) => void): void {
  resolve(result);
}

/** serveRequest as a promise, for doors that await (the socket); HTTP takes the callback. */
export function servedResult(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: ServingContext,
  caller?: KeyedCaller,
): Promise<RouteResult> {
  return new Promise((resolve) =>
    serveRequest(request, headers, ctx, resolveWith, resolve, caller),
  );
}
