/**
 * The single-request entry (docs/routing.md). The request's method picks its policy; the common
 * case — a method with no hedging that is not a write, answered by its first attempt — runs as
 * plain callbacks (the first attempt) and goes to the round driver (round-driver.ts) only for
 * what follows it. Hedged reads and writes are driven from the start (policy-route.ts).
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import { COST_POLICY } from './policy-table.js';
import { routeWithPolicy } from './policy-route.js';
import { RequestRoute, startRoute } from './request-route.js';
import type { RouteCallback, RouteContext } from './route-context.js';

/**
 * Routes one parsed request; `onRouted(result, token)` hears how it ended, exactly once.
 * Exceptions from routing end as a `failed` result, never reaching the caller's caller.
 * Without `allowStream` (a batch element) a large answer arrives whole, never as a stream.
 */
export function route<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
  onRouted: RouteCallback<T>,
  token: T,
  allowStream = true,
): void {
  const now = ctx.clock.now();
  const policy = ctx.policies === undefined ? COST_POLICY : ctx.policies().of(request.methodId);
  const finish = onRouted as RouteCallback<unknown>;
  const state = new RequestRoute(request, headers, ctx, now, policy, allowStream, finish, token);
  if (policy.special) {
    routeWithPolicy(state);
    return;
  }
  startRoute(state, request.body, headers, allowStream, now);
}
