/**
 * The single-request entry (docs/routing.md). The request's method picks its policy; the common
 * case — a method with no hedging that is not a write, answered by its first attempt — runs as
 * plain callbacks (the first attempt) and an async loop only for what follows it
 * (request-route.ts). Hedged reads and writes take their own driver (policy-route.ts).
 */
import type { ForwardHeaders } from '../node/http-transport.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import { sendAttempt, type Attempt } from './attempt.js';
import { COST_POLICY } from './policy-table.js';
import { routeWithPolicy } from './policy-route.js';
import { RequestRoute, continueRouting } from './request-route.js';
import type { RouteCallback, RouteContext, RouteResult } from './route-context.js';

function onFirstSettled(attempt: Attempt): void {
  const state = attempt.owner as RequestRoute<unknown>;
  let result: RouteResult | undefined;
  try {
    result = state.settle(attempt);
  } catch (err) {
    result = state.failed(err);
  }
  if (result === undefined) continueRouting(state);
  else state.finish(result);
}

/**
 * Routes one parsed request; `onRouted(result, token)` hears how it ended, exactly once.
 * Exceptions from routing end as a `failed` result, never reaching the caller's caller.
 */
export function route<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
  onRouted: RouteCallback<T>,
  token: T,
): void {
  const now = ctx.clock.now();
  const policy = ctx.policies === undefined ? COST_POLICY : ctx.policies().of(request.methodId);
  const state = new RequestRoute(request, headers, ctx, now, onRouted, token, policy);
  if (policy.special) {
    routeWithPolicy(state as RequestRoute<unknown>);
    return;
  }
  let attempt: Attempt | undefined;
  try {
    attempt = state.walk(now);
  } catch (err) {
    state.finish(state.failed(err));
    return;
  }
  if (attempt === undefined) {
    continueRouting(state as RequestRoute<unknown>);
    return;
  }
  attempt.owner = state;
  attempt.onSettled = onFirstSettled;
  sendAttempt(attempt, request.body, headers, true, now);
}
