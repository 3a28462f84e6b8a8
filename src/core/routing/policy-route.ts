/**
 * The drivers of methods whose policy needs more than "walk and retry" (docs/routing.md §6):
 *
 * - Hedged reads: when the first attempt has not answered after `hedge_after_ms`, one more
 *   node is asked (within the hedge cap, and every limit admission enforces); the first
 *   answer wins and the other attempt is cancelled, its permit freed at once. Both are booked.
 * - Writes: sent to `broadcast` nodes at once (default one); the first success answers. A
 *   write moves on to another node only when no attempt may have delivered it (refused
 *   connection, 429/503, throttled) — or when it is a signed transaction, whose identity
 *   cascade computes itself. A node's "already known" after an attempt that may have landed is
 *   a success: the client gets the hash / signature, and nobody is penalized.
 */
import { HedgeEvent, WriteOutcome } from '../metrics.js';
import { readIdJson } from '../protocol/rpc-request.js';
import { transactionIdentity } from '../protocol/write-methods.js';
import { endOfRound, waitOutRound } from './admission.js';
import { AttemptRace } from './attempt-race.js';
import type { Attempt } from './attempt.js';
import {
  ALREADY_KNOWN,
  NODE_RPC_ERROR,
  NODE_STATE_ERROR,
  WRITE_REFUSED,
  WRITE_THROTTLED,
  type Verdict,
} from './classify.js';
import { retry, type RequestRoute } from './request-route.js';
import type { RouteResult } from './route-context.js';

type Route = RequestRoute<unknown>;

/** Routes a hedged read or a write; the request's callback hears the result. */
export function routeWithPolicy(state: Route): void {
  const run = state.policy.write ? routeWrite(state) : routeHedged(state);
  run.then(
    (result) => state.finish(result),
    (err: unknown) => state.finish(state.failed(err)),
  );
}

async function routeHedged(state: Route): Promise<RouteResult> {
  const { ctx, request } = state;
  const hedges = ctx.policies!().hedges;
  hedges.earn();
  const first = state.walk(ctx.clock.now());
  if (first === undefined) return retry(state);
  const race = new AttemptRace(ctx.clock, request.body, state.headers, true);
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
    if (race.open === 0) return retry(state);
  }
}

/** What one round of write attempts came to. */
interface WriteRound {
  readonly result?: RouteResult;
  /** Some attempt may have delivered the write. */
  readonly landed: boolean;
}

/** Refusals: the node answered that it did not take the write (throttled, busy, lacking state). */
const REFUSALS: ReadonlySet<Verdict> = new Set([
  WRITE_REFUSED,
  WRITE_THROTTLED,
  NODE_STATE_ERROR,
  NODE_RPC_ERROR,
]);

/**
 * Whether a write attempt that did not succeed may still have delivered the write: yes after a
 * timeout, a broken answer, an unknown error or a failed gateway; no when the request was never
 * written, or the node refused it or said the request is wrong.
 */
function mayHaveLanded(attempt: Attempt, verdict: Verdict): boolean {
  if (REFUSALS.has(verdict)) return false;
  const response = attempt.response;
  if (response?.kind === 'transport_error' && !response.sent) return false;
  // A final answer about the request (a revert, a bad nonce) says the node refused it.
  return !(verdict.kind === 'final' && verdict.penalty === 'never');
}

/** The node's "already known", answered as the acceptance it stands for. */
function knownAnswer(state: Route, attempt: Attempt, identity: string): RouteResult {
  const body = `{"jsonrpc":"2.0","id":${readIdJson(state.request)},"result":${JSON.stringify(identity)}}`;
  return {
    kind: 'answer',
    status: 200,
    contentType: 'application/json',
    body: Buffer.from(body, 'utf8'),
    node: attempt.node.name,
    attempts: state.attempts,
    credits: state.credits,
  };
}

/**
 * A node's "already known" shows the transaction reached the network: the nodes penalized for
 * not answering it in time had delivered it (late). Their penalty for that attempt is lifted —
 * unless the request was failing open, when they were penalized before it.
 */
function forgive(state: Route, suspects: readonly Attempt[]): void {
  if (state.failOpen) return;
  const { clock, events } = state.ctx;
  const now = clock.now();
  for (const { node } of suspects) {
    if (!node.penalty.isActive(now)) continue;
    const since = node.penalty.since;
    node.penalty.clear();
    events.recovered(node, Math.round((now - since) / 100) / 10);
  }
}

/** Reads back one round's attempts: the first success answers; the rest stay booked. */
async function settleWrites(
  state: Route,
  race: AttemptRace,
  identity: string | undefined,
  landedBefore: boolean,
  suspects: Attempt[],
): Promise<WriteRound> {
  const metrics = state.ctx.metrics;
  let landed = false;
  let final: Attempt | undefined;
  let known: Attempt | undefined;
  while (race.open > 0) {
    const attempt = (await race.next())!;
    if (attempt.state === 'failed') return { result: state.failed(attempt.error), landed: true };
    if (attempt.state !== 'done') {
      landed = true; // the budget ran out with the write in flight
      continue;
    }
    const verdict = attempt.verdict!;
    if (verdict.kind === 'success') {
      metrics.write(WriteOutcome.sent);
      return { result: state.answer(attempt), landed: true };
    }
    if (verdict === ALREADY_KNOWN) {
      // Only another attempt of this request explains it as ours having landed.
      const ours = identity !== undefined && (landedBefore || landed || race.sent.length > 1);
      if (ours) known ??= attempt;
      else final ??= attempt;
      continue;
    }
    if (mayHaveLanded(attempt, verdict)) {
      landed = true;
      if (verdict.penalty === 'now') suspects.push(attempt);
    }
    const settled = state.settle(attempt);
    if (verdict.kind === 'final' || settled !== undefined) final ??= attempt;
  }
  if (known !== undefined) {
    forgive(state, suspects);
    metrics.write(WriteOutcome.alreadyKnownAsSuccess);
    return { result: knownAnswer(state, known, identity!), landed: true };
  }
  if (final !== undefined) {
    metrics.write(WriteOutcome.failed);
    return { result: state.answer(final), landed };
  }
  return { landed };
}

/** Admits this round's attempts: up to `width` by walking, else what the round end waits for. */
async function admitWrites(state: Route, race: AttemptRace, width: number): Promise<boolean> {
  const { ctx } = state;
  const now = ctx.clock.now();
  for (let attempt = state.walk(now); attempt !== undefined; attempt = state.walk(now)) {
    race.send(attempt);
    if (race.sent.length >= width) break;
  }
  if (race.sent.length > 0) return true;
  const end = endOfRound(state.round, ctx.table(), state.deadline - now);
  if (end.kind === 'exhausted' || end.kind === 'timeout') return false;
  if (end.kind === 'fail_open') state.failOpen = true;
  const waited = await waitOutRound(end, state, state.round, state.deadline, ctx);
  state.newRound(ctx.clock.now());
  if (waited !== undefined) race.send(waited);
  return true;
}

async function routeWrite(state: Route): Promise<RouteResult> {
  const { ctx, request, policy } = state;
  const identity = policy.signed ? transactionIdentity(request.method, request.body) : undefined;
  let landed = false;
  const suspects: Attempt[] = [];
  let width = policy.broadcast;
  for (;;) {
    if (ctx.clock.now() >= state.deadline) return wrote(state, state.giveUp('timeout'));
    const race = new AttemptRace(ctx.clock, request.body, state.headers, false);
    if (!(await admitWrites(state, race, width))) {
      const timedOut = ctx.clock.now() >= state.deadline;
      return wrote(state, unsure(state, landed, timedOut));
    }
    if (race.sent.length === 0) continue;
    width = 1; // a broadcast is the first send; retries go one node at a time
    const round = await settleWrites(state, race, identity, landed, suspects);
    if (round.result !== undefined) return round.result;
    landed ||= round.landed;
    // A write that may have landed goes nowhere else unless cascade can identify it.
    if (landed && identity === undefined) return wrote(state, unsure(state, true, false));
  }
}

/** Routing gave up on a write: an upstream's error if one came, else ours (saying what we know). */
function unsure(state: Route, mayHaveLanded: boolean, timedOut: boolean): RouteResult {
  const result = state.giveUp(timedOut ? 'timeout' : 'exhausted');
  if (result.kind !== 'exhausted' || !mayHaveLanded) return result;
  return { ...result, unsure: true };
}

function wrote(state: Route, result: RouteResult): RouteResult {
  state.ctx.metrics.write(WriteOutcome.failed);
  return result;
}
