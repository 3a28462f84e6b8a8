/**
 * The one round driver (docs/routing.md §2): a route walks its candidates over the ranked
 * table in rounds until it is answered, exhausted or out of budget. Every door drives its
 * routes through it — a single request after its first attempt, a batch's read elements,
 * hedged reads and writes. What a round sends and what its settlements mean is the route's
 * strategy (one attempt at a time, a hedge race, the write rules, a batch's sub-batches); what
 * happens when a round admitted nothing — the rate-token sleep, the FIFO permit wait, failing
 * open once, walking again after a reload, giving up — is the driver's, the same for all.
 */
import { endOfRound, waitOutRound, type AdmissionRound, type CandidateGroup } from './admission.js';
import type { Attempt } from './attempt.js';
import type { RouteContext } from './route-context.js';

/** What the driver rounds over: a request, or a batch's open elements of one policy. */
export interface DrivenRoute extends CandidateGroup {
  readonly ctx: RouteContext;
  /** The request's deadline (clock reading). */
  readonly deadline: number;
  /** The round being walked. */
  readonly round: AdmissionRound;
  /** Set once every node was skipped for a penalty: later rounds dial penalized nodes too. */
  failOpen: boolean;
  /** Starts a fresh walk of the table now in force (a reload is seen here). */
  newRound(now: number): void;
}

/** A round sent something that did not end the route: play on. */
export const NEXT: unique symbol = Symbol('next');
/** The round admitted nothing: the driver decides what to wait for. */
export const IDLE: unique symbol = Symbol('idle');

/** What one play of a strategy came to: the route's result, or NEXT / IDLE. */
export type Played<R> = R | typeof NEXT | typeof IDLE;

/** How a route spends its rounds (a value plugged into the driver, not a fork of it). */
export interface RoundStrategy<S extends DrivenRoute, R> {
  /** Admits from the current round what this strategy sends at once, sends it, reads it back. */
  play(route: S, now: number): Promise<Played<R>>;
  /** Sends and reads back an attempt admitted after a permit wait. */
  playWaited(route: S, attempt: Attempt): Promise<Played<R>>;
  /** Routing is over without a final answer (exhausted, or the budget ran out). */
  giveUp(route: S, kind: 'exhausted' | 'timeout'): R;
}

/** Drives `route` round by round with `strategy` until it has a result. */
export async function drive<S extends DrivenRoute, R>(
  route: S,
  strategy: RoundStrategy<S, R>,
): Promise<R> {
  const ctx = route.ctx;
  for (;;) {
    const now = ctx.clock.now();
    if (now >= route.deadline) return strategy.giveUp(route, 'timeout');
    const played = await strategy.play(route, now);
    if (played === NEXT) continue;
    if (played !== IDLE) return played;
    const end = endOfRound(route.round, ctx.table(), route.deadline - now);
    if (end.kind === 'exhausted' || end.kind === 'timeout') return strategy.giveUp(route, end.kind);
    if (end.kind === 'fail_open') route.failOpen = true;
    const attempt = await waitOutRound(end, route, route.round, route.deadline, ctx);
    if (attempt !== undefined) {
      const waited = await strategy.playWaited(route, attempt);
      if (waited !== NEXT && waited !== IDLE) return waited;
    }
    // A wait ends its round (an attempt that came from it included): a fresh one follows.
    route.newRound(ctx.clock.now());
  }
}
