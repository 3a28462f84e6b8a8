/**
 * The one admission policy: which node may take what, now — and what to do when a round of
 * the ranked table admitted nothing. The round driver (round-driver.ts) calls it for every door
 * (a single request, a batch's elements grouped per node, hedged reads, writes), so the rule
 * that decides where money is spent exists once.
 *
 * Per node, in this order (docs/routing.md, "How a request is routed"); the checks themselves
 * are the one eligibility rule (eligibility.ts), which WebSocket placement asks too:
 *   retired by a reload / cordoned / on another chain / tried by every candidate → pass over
 *   penalized (unless the request fails open)             → skip: penalized
 *   per candidate: the node prices its method              → else skip: method_unsupported
 *   per candidate: not behind what the method tolerates while a fresher node of its tier
 *     can take it (lag-gate.ts)                             → else pass over (rpc_lag_skips_total)
 *   per candidate: usage at or under the spillover threshold → else skip: quota_exhausted
 *   a concurrency permit (one per attempt; the node's and
 *     its provider account's)                              → else skip: saturated
 *   per candidate: a rate token (the node's and its account's) → else skip: rate_limit
 *   book each taken candidate's price                      → the attempt is admitted
 * The price and quota checks come before the permit and the token, so a node that cannot or
 * must not serve never spends either.
 */
import type { ChainState } from '../chain/chain-state.js';
import type { Clock } from '../clock.js';
import { priceOf } from '../config/price-list.js';
import { SkipReason, type ProxyMetrics } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { Attempt } from './attempt.js';
import {
  ACCOUNT_SATURATED,
  BAR_OVER_QUOTA,
  BAR_PENALIZED,
  BAR_UNPRICED,
  DOOR_REQUEST,
  HELD_ACCOUNT,
  HELD_ALL,
  HELD_NODE,
  HELD_NONE,
  nodeBar,
  passedOver,
  releaseHeld,
  takeLimits,
  workBar,
} from './eligibility.js';
import { lagSkips } from './lag-gate.js';
import type { RoutingTable } from './routing-table.js';
import type { TriedNodes } from './tried-nodes.js';

/** One thing to send: a single request, or one element of a batch. */
export interface Candidate {
  readonly methodId: number;
  /** Nodes this candidate went to, or that cannot serve it; never offered to it again. */
  readonly tried: TriedNodes;
  /** The request's bytes, when at hand: its commitment and minContextSlot judge lag. */
  readonly requestBody?: Buffer;
  /** What those bytes ask of heads, once read (chain/read-heads.ts keeps it here). */
  headAsk?: number | undefined;
}

/** The candidates a node may take in one attempt (one for a single request). */
export interface CandidateGroup {
  readonly size: number;
  /** The candidate at `index`, or undefined when it needs nothing more this round. */
  candidate(index: number): Candidate | undefined;
  /** `attempt` took the candidate at `index`, booking `cost`. */
  take(index: number, attempt: Attempt): void;
}

/** What one walk of the ranked table saw. */
export class AdmissionRound {
  /** Soonest a rate-limited node has a token (ms), or Infinity. */
  minWait = Infinity;
  /** The first node that had no permit free (its own, or its account's). */
  firstSaturated: UpstreamNode | undefined = undefined;
  /** It was the account's permits that were all taken, not the node's. */
  accountSaturated = false;
  sawPenalized = false;
  /** Walk order; `cursor` is where a driver's walk stands in it. */
  readonly ranked: readonly UpstreamNode[];
  cursor = 0;
  /** The node set walked (its identity changes only on reload). */
  readonly nodes: readonly UpstreamNode[];
  /** What the traffic showed of the chain (lag-gate.ts); absent in tables built bare. */
  readonly chain: ChainState | undefined;

  constructor(
    table: RoutingTable,
    /** Clock reading at the round's start: penalties are judged against it. */
    readonly startedAt: number,
    /** The request walks penalized nodes too (every node was skipped for a penalty). */
    readonly failOpen: boolean,
    /** Walk fastest-first (the `latency` strategy) instead of cheapest tier first. */
    byLatency = false,
  ) {
    // A strategy changes only the order; every check below applies the same either way.
    this.ranked = byLatency ? table.byLatency : table.ranked;
    this.nodes = table.all;
    this.chain = table.chain;
  }
}

/** The index of the first candidate `node` has not been tried for, or -1. */
function firstUntried(node: UpstreamNode, group: CandidateGroup): number {
  for (let i = 0; i < group.size; i++) {
    const candidate = group.candidate(i);
    if (candidate !== undefined && !candidate.tried.includes(node)) return i;
  }
  return -1;
}

/**
 * Admits what `node` may take of `group` now, in candidate order: an Attempt holding its
 * permits with the candidates taken and their credits booked, or undefined (skips counted in
 * `round`). `held` (HELD_* bits): permits the caller already holds after waiting for one; they
 * become the attempt's, or are given back when nothing is admitted.
 */
export function admit(
  node: UpstreamNode,
  group: CandidateGroup,
  round: AdmissionRound,
  now: number,
  held: number = HELD_NONE,
): Attempt | undefined {
  let attempt: Attempt | undefined;
  // A held permit was waited for after this round judged the node: no second penalty check.
  const bar = nodeBar(node, DOOR_REQUEST, round.startedAt, held !== HELD_NONE || round.failOpen);
  const first = passedOver(bar) ? -1 : firstUntried(node, group);
  if (first === -1) {
    releaseHeld(node, held);
    return undefined;
  }
  if (bar === BAR_PENALIZED) {
    node.metrics.skip(SkipReason.penalized);
    round.sawPenalized = true;
    return undefined;
  }
  let unsupported = false;
  // A node that refused a batch gets single requests only (one candidate per attempt).
  const most = node.refusesBatches ? 1 : Infinity;
  for (let i = first; i < group.size; i++) {
    const candidate = group.candidate(i);
    if (candidate === undefined || (i !== first && candidate.tried.includes(node))) continue;
    const cost = priceOf(node.config.pricing, candidate.methodId);
    const work = workBar(node, cost);
    if (work === BAR_UNPRICED) {
      candidate.tried.push(node);
      unsupported = true;
      continue;
    }
    // Behind while a fresher node of the same tier can take it: pass over, not tried, so it
    // still serves when that node cannot (fail-open).
    if (lagSkips(node, candidate, round, now)) continue;
    if (work === BAR_OVER_QUOTA) {
      node.metrics.skip(SkipReason.quotaExhausted);
      candidate.tried.push(node);
      break;
    }
    const wait = takeLimits(node, now, DOOR_REQUEST, attempt !== undefined ? HELD_ALL : held);
    if (wait < 0) {
      node.metrics.skip(SkipReason.saturated);
      if (round.firstSaturated === undefined) {
        round.firstSaturated = node;
        round.accountSaturated = wait === ACCOUNT_SATURATED;
      }
      break;
    }
    if (wait > 0) {
      node.metrics.skip(SkipReason.rateLimit);
      if (wait < round.minWait) round.minWait = wait;
      break;
    }
    if (attempt === undefined) {
      // The permits (taken now, or held) are the attempt's from here on.
      attempt = new Attempt(node);
      held = HELD_NONE;
    }
    attempt.usage.add(cost);
    attempt.credits += cost;
    attempt.taken++;
    candidate.tried.push(node);
    group.take(i, attempt);
    if (attempt.taken >= most) break;
  }
  if (unsupported) node.metrics.skip(SkipReason.methodUnsupported);
  if (attempt === undefined) releaseHeld(node, held);
  return attempt;
}

/** What a driver does after a round that admitted nothing. */
export type RoundEnd =
  /** Sleep until the earliest rate token, then walk again. */
  | { readonly kind: 'sleep'; readonly ms: number }
  /** Wait (FIFO) for a permit on `node` (or on its account's), then admit there. */
  | { readonly kind: 'wait'; readonly node: UpstreamNode; readonly account: boolean }
  /** Walk again, dialing penalized nodes too. */
  | { readonly kind: 'fail_open' }
  /** A reload published new nodes while the round walked the old set: walk again. */
  | { readonly kind: 'again' }
  /** Nothing is worth waiting for. */
  | { readonly kind: 'exhausted' }
  | { readonly kind: 'timeout' };

const FAIL_OPEN: RoundEnd = { kind: 'fail_open' };
const AGAIN: RoundEnd = { kind: 'again' };
const EXHAUSTED: RoundEnd = { kind: 'exhausted' };
const TIMEOUT: RoundEnd = { kind: 'timeout' };

/**
 * After a round that admitted nothing: sleep for the earliest token if a node was rate-limited,
 * else wait for a permit on the first saturated node, else fail open once if nodes were skipped
 * for penalties, else give up — all inside the `remaining` budget.
 */
export function endOfRound(
  round: AdmissionRound,
  current: RoutingTable,
  remaining: number,
): RoundEnd {
  if (remaining <= 0) return TIMEOUT;
  if (round.minWait !== Infinity) return { kind: 'sleep', ms: Math.min(round.minWait, remaining) };
  if (round.firstSaturated !== undefined)
    return { kind: 'wait', node: round.firstSaturated, account: round.accountSaturated };
  if (round.sawPenalized && !round.failOpen) return FAIL_OPEN;
  if (current.all !== round.nodes) return AGAIN;
  return EXHAUSTED;
}

/** What waiting needs: the clock, and the gauge of requests waiting. */
export interface WaitContext {
  readonly clock: Clock;
  readonly metrics: ProxyMetrics;
}

/** Sleeps `ms` (a rate-limit wait), counted in rpc_sleep_queue_size. */
async function parkFor(ms: number, ctx: WaitContext): Promise<void> {
  ctx.metrics.sleepQueue(1);
  try {
    await ctx.clock.sleep(ms);
  } finally {
    ctx.metrics.sleepQueue(-1);
  }
}

/**
 * Waits (FIFO, counted in rpc_sleep_queue_size) for a permit on `node` — or on its provider
 * account when that was what was full — then admits `group` there: the attempt, undefined
 * when the node would not take it after all (walk again), or 'timeout' when the budget ran out
 * first — a permit granted at the very end is given back, since an attempt then could only be
 * booked, never answered.
 */
async function waitForPermit(
  node: UpstreamNode,
  onAccount: boolean,
  group: CandidateGroup,
  round: AdmissionRound,
  deadline: number,
  ctx: WaitContext,
): Promise<Attempt | undefined | 'timeout'> {
  const pool = onAccount ? node.account?.permits : node.permits;
  if (pool === undefined) return undefined;
  ctx.metrics.sleepQueue(1);
  let granted: boolean;
  try {
    granted = await pool.waitFor(deadline - ctx.clock.now());
  } finally {
    ctx.metrics.sleepQueue(-1);
  }
  if (!granted) return 'timeout';
  const now = ctx.clock.now();
  // A reload may have moved the node to another account while it waited.
  if (now >= deadline || (onAccount && node.account?.permits !== pool)) {
    pool.release();
    return now >= deadline ? 'timeout' : undefined;
  }
  return admit(node, group, round, now, onAccount ? HELD_ACCOUNT : HELD_NODE);
}

/**
 * Carries out a round end that does not give up: sleeps until the earliest token, or waits for
 * a permit on the first saturated node and admits `group` there (the attempt it admitted), or —
 * for `fail_open` and `again` — nothing. Undefined: walk a new round (a permit wait that ran
 * out leaves the budget spent, which the driver's deadline check sees).
 */
export async function waitOutRound(
  end: RoundEnd,
  group: CandidateGroup,
  round: AdmissionRound,
  deadline: number,
  ctx: WaitContext,
): Promise<Attempt | undefined> {
  if (end.kind === 'sleep') await parkFor(end.ms, ctx);
  if (end.kind !== 'wait') return undefined;
  const waited = await waitForPermit(end.node, end.account, group, round, deadline, ctx);
  return waited === 'timeout' ? undefined : waited;
}
