/**
 * A single request's routing state and its retry loop (docs/routing.md): the request walks the
 * ranked table in rounds, admitting nodes through the one admission policy; a final answer ends
 * it, a retryable one moves on, an unknown error waits for a second opinion (disputes.ts), and
 * when routing gives up an upstream's error beats a synthetic one. Every driver — the plain one
 * (route.ts), hedged reads and writes (policy-route.ts) — settles attempts through it.
 */
import type { ForwardHeaders } from '../node/http-transport.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import {
  AdmissionRound,
  admit,
  endOfRound,
  waitOutRound,
  type Candidate,
  type CandidateGroup,
} from './admission.js';
import { settleAttempt, type Attempt } from './attempt.js';
import { classifySingle, classifyWrite, errorKeyOf } from './classify.js';
import { Disputes } from './disputes.js';
import type { RoutePolicy } from './policy-table.js';
import type { RouteCallback, RouteContext, RouteResult } from './route-context.js';

/** Request-lifetime routing state: the request is its own (only) admission candidate. */
export class RequestRoute<T> implements Candidate, CandidateGroup {
  readonly tried: UpstreamNode[] = [];
  readonly size = 1;
  readonly methodId: number;
  readonly deadline: number;
  failOpen = false;
  attempts = 0;
  credits = 0;
  round: AdmissionRound;
  /** The attempt in flight came from waiting for a permit: a fresh round follows it. */
  afterWait = false;
  /** The last upstream error answer worth relaying if no node does better. */
  held: Attempt | undefined = undefined;
  /** Unknown errors awaiting a second opinion (created on the first one). */
  disputes: Disputes | undefined = undefined;

  constructor(
    readonly request: RpcRequest,
    readonly headers: ForwardHeaders,
    readonly ctx: RouteContext,
    now: number,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
    readonly policy: RoutePolicy,
  ) {
    this.methodId = request.methodId;
    this.deadline = now + ctx.budgetMs;
    this.round = new AdmissionRound(ctx.table(), now, false, policy.byLatency);
  }

  candidate(): Candidate {
    return this;
  }

  take(_index: number, attempt: Attempt): void {
    this.attempts++;
    this.ctx.metrics.strategyAttempt(this.policy.strategyIndex);
    this.credits += attempt.credits;
    attempt.ctx = this.ctx;
    attempt.deadline = this.deadline;
    attempt.classify = this.policy.write ? classifyWrite : classifySingle;
    attempt.subject = this.request;
  }

  /** Admits the next node of the round's walk, or undefined when the round is over. */
  walk(now: number): Attempt | undefined {
    const round = this.round;
    while (round.cursor < round.ranked.length) {
      const attempt = admit(round.ranked[round.cursor++]!, this, round, now);
      if (attempt !== undefined) return attempt;
    }
    return undefined;
  }

  newRound(now: number): void {
    this.round = new AdmissionRound(this.ctx.table(), now, this.failOpen, this.policy.byLatency);
  }

  /** What a settled attempt means for the request: its result, or undefined to go on. */
  settle(attempt: Attempt): RouteResult | undefined {
    if (attempt.state === 'failed') return this.failed(attempt.error);
    if (attempt.state === 'abandoned') return this.giveUp('timeout');
    const { verdict, response, endedAt, node } = attempt;
    if (verdict!.kind === 'success') this.disputes?.answered(endedAt, this.ctx.events);
    if (verdict!.kind !== 'retry') return this.answer(attempt);
    if (!verdict!.relayable || response!.kind !== 'answer') return undefined;
    const key = verdict!.penalty === 'disputed' ? errorKeyOf(response!.body) : undefined;
    if (
      key !== undefined &&
      (this.disputes ??= new Disputes()).agree(node, key, endedAt, this.ctx.events)
    ) {
      return this.answer(attempt);
    }
    this.held = attempt;
    return undefined;
  }

  answer(attempt: Attempt): RouteResult {
    const response = attempt.response!;
    if (response.kind !== 'answer' && response.kind !== 'stream') return this.giveUp('exhausted');
    return {
      kind: 'answer',
      status: response.status,
      contentType: response.contentType,
      body: response.kind === 'stream' ? response.stream : response.body,
      node: attempt.node.name,
      attempts: this.attempts,
      credits: this.credits,
    };
  }

  /** Routing is over without a final answer: an upstream's error if one came, else ours. */
  giveUp(kind: 'exhausted' | 'timeout'): RouteResult {
    if (this.held !== undefined) return this.answer(this.held);
    return { kind, attempts: this.attempts, credits: this.credits };
  }

  failed(error: unknown): RouteResult {
    return { kind: 'failed', error, attempts: this.attempts, credits: this.credits };
  }

  finish(result: RouteResult): void {
    this.onRouted(result, this.token);
  }
}

/** Goes on with the retry loop, then tells the caller how the request ended. */
export function continueRouting(state: RequestRoute<unknown>): void {
  retry(state).then(
    (result) => state.finish(result),
    (err: unknown) => state.finish(state.failed(err)),
  );
}

/** After the first attempt (or a first round that admitted nothing): the retry loop. */
export async function retry(state: RequestRoute<unknown>): Promise<RouteResult> {
  const { ctx, request } = state;
  for (;;) {
    const now = ctx.clock.now();
    if (now >= state.deadline) return state.giveUp('timeout');
    let attempt = state.walk(now);
    if (attempt === undefined) {
      const end = endOfRound(state.round, ctx.table(), state.deadline - now);
      if (end.kind === 'exhausted' || end.kind === 'timeout') return state.giveUp(end.kind);
      if (end.kind === 'fail_open') state.failOpen = true;
      attempt = await waitOutRound(end, state, state.round, state.deadline, ctx);
      state.afterWait = attempt !== undefined;
      if (attempt === undefined) {
        state.newRound(ctx.clock.now());
        continue;
      }
    }
    await settleAttempt(attempt, request.body, state.headers, true, ctx.clock.now());
    const result = state.settle(attempt);
    if (result !== undefined) return result;
    if (state.afterWait) {
      state.afterWait = false;
      state.newRound(ctx.clock.now());
    }
  }
}
