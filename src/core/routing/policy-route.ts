/**
 * The strategies of methods whose policy needs more than "walk and retry" (docs/routing.md §6),
 * plugged into the one round driver:
 *
 * - Hedged reads (here): when the first attempt has not answered after `hedge_after_ms`, one
 *   more node is asked (within the hedge cap, and every limit admission enforces); the first
 *   answer wins and the other attempt is cancelled, its permit freed at once. Both are booked.
 *   If both fail, the request goes on one attempt at a time.
 * - Writes (write-route.ts).
 */
import { HedgeEvent } from '../metrics.js';
import { AttemptRace } from './attempt-race.js';
import type { Attempt } from './attempt.js';
import type { HedgeBudget } from './hedge-budget.js';
import { ONE_AT_A_TIME, continueRouting, type RequestRoute } from './request-route.js';
import { IDLE, NEXT, type Played, type RoundStrategy } from './round-driver.js';
import type { RouteResult } from './route-context.js';
import { WriteRules } from './write-route.js';

/** Routes a hedged read or a write; the request's `finish` hears the result. */
export function routeWithPolicy(state: RequestRoute): void {
  const strategy = state.policy.write ? new WriteRules(state) : hedgedReads(state);
  continueRouting(state, strategy);
}

/** The hedge strategy of one request: its first round races a hedge, then one at a time. */
function hedgedReads(state: RequestRoute): RoundStrategy<RequestRoute, RouteResult> {
  const hedges = state.ctx.policies!().hedges;
  hedges.earn();
  let raced = false;
  return {
    play(route, now) {
      if (raced) return ONE_AT_A_TIME.play(route, now);
      raced = true;
      const first = route.walk(now);
      return first === undefined ? Promise.resolve(IDLE) : race(route, first, hedges);
    },
    playWaited: (route, attempt) => ONE_AT_A_TIME.playWaited(route, attempt),
    giveUp: (route, kind) => ONE_AT_A_TIME.giveUp(route, kind),
  };
}

/** Sends `first`; hedges it after `hedge_after_ms` if the cap allows; the first answer wins. */
async function race(
  state: RequestRoute,
  first: Attempt,
  hedges: HedgeBudget,
): Promise<Played<RouteResult>> {
  const { ctx, request } = state;
  const race = new AttemptRace(ctx.clock, request.body, state.headers, state.allowStream);
  race.send(first);
  let settled = await race.next(state.policy.hedgeAfterMs);
  let hedge: Attempt | undefined;
  if (settled === undefined) {
    // No answer yet: one more node, if the cap allows and a node can take it now.
    hedge = hedges.available() ? state.walk(ctx.clock.now()) : undefined;
    if (hedge !== undefined) {
      hedges.take();
      ctx.metrics.hedge(HedgeEvent.sent);
      race.send(hedge);
    }
    settled = await race.next();
  }
  for (let attempt = settled!; ; attempt = (await race.next())!) {
    const result = state.settle(attempt);
    if (result !== undefined) {
      for (let n = race.cancelOthers(attempt); n > 0; n--) ctx.metrics.hedge(HedgeEvent.cancelled);
      if (attempt === hedge && result.kind === 'answer') ctx.metrics.hedge(HedgeEvent.won);
      return result;
    }
    if (race.open === 0) return NEXT;
  }
}
