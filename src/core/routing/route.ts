/**
 * The single-request driver (docs/routing.md). The request walks the ranked table in rounds,
 * admitting nodes through the one admission policy; a final answer ends it, a retryable one
 * moves on. The first attempt — the common request is one attempt, answered — runs as plain
 * callbacks from the upstream's answer to the client's; anything after it is an async loop.
 *
 * Whose fault an error is decides what happens next: an error the request caused is relayed
 * at once; an unknown error is judged by agreement — when a second node answers with the same
 * code and message it is the request's (relayed, nobody penalized), when another node answers
 * successfully the first node is penalized after all. When every attempt ended in an upstream
 * error, the client gets an upstream's error, never a synthetic 502.
 */
import type { ProxyMetrics } from '../metrics.js';
import type { ForwardHeaders } from '../node/http-transport.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import type { UpstreamStream } from '../node/upstream-stream.js';
import { isNotification, type RpcRequest } from '../protocol/rpc-request.js';
import {
  AdmissionRound,
  admit,
  endOfRound,
  parkFor,
  waitForPermit,
  type Candidate,
  type CandidateGroup,
} from './admission.js';
import {
  penalizeNode,
  sendAttempt,
  settleAttempt,
  type Attempt,
  type AttemptContext,
} from './attempt.js';
import { classifyAnswer, errorKeyOf } from './classify.js';
import type { RoutingTable } from './routing-table.js';

/** What routing needs from the server. */
export interface RouteContext extends AttemptContext {
  /** The current table; re-read at every round so a reload mid-request is seen. */
  readonly table: () => RoutingTable;
  readonly metrics: ProxyMetrics;
  /** Whole-request budget (1 s). */
  readonly budgetMs: number;
}

/** How a request ended. */
export type RouteResult =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string | undefined;
      /** The whole answer, or a large one still arriving (to pipe or abort). */
      readonly body: Buffer | UpstreamStream;
      readonly node: string;
      readonly attempts: number;
      readonly credits: number;
    }
  | { readonly kind: 'exhausted' | 'timeout'; readonly attempts: number; readonly credits: number }
  /** Routing threw (a bug): the client must still be answered. */
  | {
      readonly kind: 'failed';
      readonly error: unknown;
      readonly attempts: number;
      readonly credits: number;
    };

/** Hears how a routed request ended, with the caller's token (so it need not be a closure). */
export type RouteCallback<T> = (result: RouteResult, token: T) => void;

function classifySingle(
  status: number,
  body: Buffer,
  request: unknown,
): ReturnType<typeof classifyAnswer> {
  return classifyAnswer(status, body, false, () => isNotification(request as RpcRequest));
}

/** An unknown error a node gave, awaiting a second opinion. */
interface Dispute {
  readonly node: UpstreamNode;
  readonly key: string | undefined;
}

/** Request-lifetime routing state: the request is its own (only) admission candidate. */
class RequestRoute<T> implements Candidate, CandidateGroup {
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
  disputes: Dispute[] | undefined = undefined;

  constructor(
    readonly request: RpcRequest,
    readonly headers: ForwardHeaders,
    readonly ctx: RouteContext,
    now: number,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
  ) {
    this.methodId = request.methodId;
    this.deadline = now + ctx.budgetMs;
    this.round = new AdmissionRound(ctx.table(), now, false);
  }

  candidate(): Candidate {
    return this;
  }

  take(_index: number, attempt: Attempt): void {
    this.attempts++;
    this.credits += attempt.credits;
    attempt.ctx = this.ctx;
    attempt.deadline = this.deadline;
    attempt.classify = classifySingle;
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
    this.round = new AdmissionRound(this.ctx.table(), now, this.failOpen);
  }

  /** What a settled attempt means for the request: its result, or undefined to go on. */
  settle(attempt: Attempt): RouteResult | undefined {
    if (attempt.state === 'failed') return this.failed(attempt.error);
    if (attempt.state === 'abandoned') return this.giveUp('timeout');
    const verdict = attempt.verdict!;
    if (verdict.kind === 'success') this.#settleDisputes(undefined, attempt.endedAt);
    if (verdict.kind !== 'retry') return this.answer(attempt);
    const response = attempt.response!;
    if (!verdict.relayable || response.kind !== 'answer') return undefined;
    if (verdict.penalty === 'disputed') {
      const key = errorKeyOf(response.body);
      if (this.disputes?.some((d) => d.key === key)) {
        this.#settleDisputes(key, attempt.endedAt);
        return this.answer(attempt);
      }
      (this.disputes ??= []).push({ node: attempt.node, key });
    }
    this.held = attempt;
    return undefined;
  }

  /** Penalizes disputed nodes whose error nobody repeated (`agreed`: the error that was). */
  #settleDisputes(agreed: string | undefined, now: number): void {
    for (const dispute of this.disputes ?? []) {
      if (dispute.key === agreed) continue;
      const reason = 'JSON-RPC error that another node did not repeat';
      penalizeNode(dispute.node, reason, 0, now, this.ctx.events);
    }
    this.disputes = undefined;
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

function continueRouting(state: RequestRoute<unknown>): void {
  retry(state).then(
    (result) => state.finish(result),
    (err: unknown) => state.finish(state.failed(err)),
  );
}

/** After the first attempt (or a first round that admitted nothing): the retry loop. */
async function retry(state: RequestRoute<unknown>): Promise<RouteResult> {
  const { ctx, request } = state;
  for (;;) {
    let now = ctx.clock.now();
    if (now >= state.deadline) return state.giveUp('timeout');
    let attempt = state.walk(now);
    if (attempt === undefined) {
      const end = endOfRound(state.round, ctx.table(), state.deadline - now);
      if (end.kind === 'exhausted' || end.kind === 'timeout') return state.giveUp(end.kind);
      if (end.kind === 'wait') {
        const waited = await waitForPermit(end.node, state, state.round, state.deadline, ctx);
        if (waited === 'timeout') return state.giveUp('timeout');
        attempt = waited;
        state.afterWait = attempt !== undefined;
      } else if (end.kind === 'sleep') {
        await parkFor(end.ms, ctx);
      } else if (end.kind === 'fail_open') {
        state.failOpen = true;
      }
      if (attempt === undefined) {
        state.newRound(ctx.clock.now());
        continue;
      }
      now = ctx.clock.now();
    }
    await settleAttempt(attempt, request.body, state.headers, true, now);
    const result = state.settle(attempt);
    if (result !== undefined) return result;
    if (state.afterWait) {
      state.afterWait = false;
      state.newRound(ctx.clock.now());
    }
  }
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
  const state = new RequestRoute(request, headers, ctx, now, onRouted, token);
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
