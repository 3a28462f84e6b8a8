/**
 * The write strategy (docs/routing.md §6, `write_methods`): sent to `broadcast` nodes at once
 * (default one), then one at a time; the first success answers. A write moves on to another
 * node only when no attempt may have delivered it (refused connection, 429/503, throttled) —
 * or when it is a signed transaction, whose identity cascade computes itself. A node's "already
 * known" after an attempt that may have landed is a success: the client gets the hash /
 * signature, and the nodes penalized for timing out on the write are forgiven.
 */
import { WriteOutcome } from '../metrics.js';
import { readIdJson } from '../protocol/rpc-request.js';
import { transactionIdentity } from '../protocol/write-methods.js';
import { AttemptRace } from './attempt-race.js';
import { clearPenalty, type Attempt } from './attempt.js';
import {
  ALREADY_KNOWN,
  NODE_RPC_ERROR,
  NODE_STATE_ERROR,
  WRITE_REFUSED,
  WRITE_THROTTLED,
  type Verdict,
} from './classify.js';
import type { RequestRoute } from './request-route.js';
import { IDLE, NEXT, type Played, type RoundStrategy } from './round-driver.js';
import type { RouteResult } from './route-context.js';

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
export function mayHaveLanded(attempt: Attempt, verdict: Verdict): boolean {
  if (REFUSALS.has(verdict)) return false;
  const response = attempt.response;
  if (response?.kind === 'transport_error' && !response.sent) return false;
  // A final answer about the request (a revert, a bad nonce) says the node refused it.
  return !(verdict.kind === 'final' && verdict.penalty === 'never');
}

/** The node's "already known", answered as the acceptance it stands for. */
function knownAnswer(state: RequestRoute, attempt: Attempt, identity: string): RouteResult {
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

/** One write request's rules, as a strategy of the round driver (state lives per request). */
export class WriteRules implements RoundStrategy<RequestRoute, RouteResult> {
  /** A signed transaction's hash or signature: a resend of it is harmless. */
  readonly identity: string | undefined;
  /** Some attempt may have delivered the write. */
  landed = false;
  /** Attempts penalized for a failure that may have been the write landing late. */
  readonly suspects: Attempt[] = [];
  /** Nodes sent to at once: `broadcast` for the first send, then one. */
  width: number;

  constructor(state: RequestRoute) {
    const { policy, request } = state;
    this.identity = policy.signed ? transactionIdentity(request.method, request.body) : undefined;
    this.width = policy.broadcast;
  }

  play(state: RequestRoute, now: number): Promise<Played<RouteResult>> {
    const race = new AttemptRace(state.ctx.clock, state.request.body, state.headers, false);
    for (let attempt = state.walk(now); attempt !== undefined; attempt = state.walk(now)) {
      race.send(attempt);
      if (race.sent.length >= this.width) break;
    }
    return race.sent.length === 0 ? Promise.resolve(IDLE) : this.#readBack(state, race);
  }

  playWaited(state: RequestRoute, attempt: Attempt): Promise<Played<RouteResult>> {
    const race = new AttemptRace(state.ctx.clock, state.request.body, state.headers, false);
    race.send(attempt);
    return this.#readBack(state, race);
  }

  /** Routing gave up on a write: an upstream's error if one came, else ours (saying what we know). */
  giveUp(state: RequestRoute, kind: 'exhausted' | 'timeout'): RouteResult {
    state.ctx.metrics.write(WriteOutcome.failed);
    const result = state.giveUp(kind);
    if (result.kind !== 'exhausted' || !this.landed) return result;
    return { ...result, unsure: true };
  }

  async #readBack(state: RequestRoute, race: AttemptRace): Promise<Played<RouteResult>> {
    this.width = 1; // a broadcast is the first send; retries go one node at a time
    const result = await this.#settleRound(state, race);
    if (result !== undefined) return result;
    // A write that may have landed goes nowhere else unless cascade can identify it.
    return this.landed && this.identity === undefined ? this.giveUp(state, 'exhausted') : NEXT;
  }

  /** Reads back one round's attempts: the first success answers; the rest stay booked. */
  async #settleRound(state: RequestRoute, race: AttemptRace): Promise<RouteResult | undefined> {
    const metrics = state.ctx.metrics;
    const landedBefore = this.landed;
    let landed = false;
    let final: Attempt | undefined;
    let known: Attempt | undefined;
    while (race.open > 0) {
      const attempt = (await race.next())!;
      if (attempt.state === 'failed') {
        this.landed = true;
        return state.failed(attempt.error);
      }
      if (attempt.state !== 'done') {
        landed = true; // the budget ran out with the write in flight
        continue;
      }
      const verdict = attempt.verdict!;
      if (verdict.kind === 'success') {
        metrics.write(WriteOutcome.sent);
        return state.answer(attempt);
      }
      if (verdict === ALREADY_KNOWN) {
        // Only another attempt of this request explains it as ours having landed.
        const ours =
          this.identity !== undefined && (landedBefore || landed || race.sent.length > 1);
        if (ours) known ??= attempt;
        else final ??= attempt;
        continue;
      }
      if (mayHaveLanded(attempt, verdict)) {
        landed = true;
        if (verdict.penalty === 'now') this.suspects.push(attempt);
      }
      const settled = state.settle(attempt);
      if (verdict.kind === 'final' || settled !== undefined) final ??= attempt;
    }
    this.landed ||= landed;
    if (known !== undefined) {
      this.#forgive(state);
      metrics.write(WriteOutcome.alreadyKnownAsSuccess);
      return knownAnswer(state, known, this.identity!);
    }
    if (final !== undefined) {
      metrics.write(WriteOutcome.failed);
      return state.answer(final);
    }
    return undefined;
  }

  /**
   * A node's "already known" shows the transaction reached the network: the nodes penalized
   * for not answering it in time had delivered it (late). Their penalty is lifted — unless the
   * request was failing open, when they were penalized before it.
   */
  #forgive(state: RequestRoute): void {
    if (state.failOpen) return;
    const { clock, events } = state.ctx;
    const now = clock.now();
    for (const { node } of this.suspects) clearPenalty(node, now, events);
  }
}
