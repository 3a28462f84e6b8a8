/**
 * A single request's routing state (docs/routing.md): the request walks the ranked table in
 * rounds (round-driver.ts), admitting nodes through the one admission policy; a final answer
 * ends it, a retryable one moves on, an unknown error waits for a second opinion and a
 * relayable one is held (disputes.ts), and when routing gives up an upstream's error beats a
 * synthetic one. The plain first attempt (route.ts), one-at-a-time retries, hedged reads
 * (policy-route.ts) and writes (write-route.ts) all settle attempts through it.
 *
 * The common request allocates this object, its set of tried nodes, one admission round and one
 * attempt: the request is its own admission candidate and group, its attempts' subject and
 * first owner and, when answered, its own RouteResult. It extends nothing (it used to extend
 * the tried-node set): Node 20's V8 does not inline a derived class's `super()` call, which
 * cost a generic construct (~250 instructions) on every request; the set's own allocation is
 * inlined.
 */
import { LOGS_FILTER, Reads, methodHeads } from '../chain/method-heads.js';
import { readAnswer } from '../chain/read-heads.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { UpstreamStream } from '../node/upstream-stream.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import { AdmissionRound, admit, type Candidate } from './admission.js';
import {
  sendAttempt,
  settleAttempt,
  type Attempt,
  type AttemptOwner,
  type AttemptSubject,
} from './attempt.js';
import { classifySingle, classifyWrite, errorKeyOf, type Verdict } from './classify.js';
import { heardAnswer, heardError, type Disputes, type Hearing } from './disputes.js';
import { sampleTarget, staleAnswer } from './lag-gate.js';
import type { RoutePolicy } from './policy-table.js';
import {
  IDLE,
  NEXT,
  drive,
  type DrivenRoute,
  type Played,
  type RoundStrategy,
} from './round-driver.js';
import type { RouteCallback, RouteContext, RouteResult } from './route-context.js';
import { TriedNodes } from './tried-nodes.js';

const NO_BODY = Buffer.alloc(0);

/** Request-lifetime routing state; `finish` tells whoever asked how it ended. */
export class RequestRoute
  implements Candidate, DrivenRoute, AttemptSubject, AttemptOwner, Hearing<Attempt>
{
  /** The nodes it went to (the request is its own, only, candidate). */
  readonly tried = new TriedNodes();
  readonly methodId: number;
  readonly deadline: number;
  failOpen = false;
  attempts = 0;
  credits = 0;
  round: AdmissionRound;
  /** The last upstream error answer worth relaying if no node does better. */
  held: Attempt | undefined = undefined;
  /** Unknown errors awaiting a second opinion (created on the first one). */
  disputes: Disputes | undefined = undefined;
  // The answer, once there is one: the route is its own RouteResult (no object per request).
  // Own fields, not getters, so that a spread copy (`{ ...result, cache }`) keeps them.
  readonly kind = 'answer' as const;
  status = 0;
  contentType: string | undefined = undefined;
  body: Buffer | UpstreamStream = NO_BODY;
  node = '';
  /** Set by the response cache's flight leader (serving/serve-request.ts): a cacheable miss. */
  cache: 'miss' | undefined = undefined;
  /** What the request asks of heads (chain/read-heads.ts): read by its parse, else once here. */
  headAsk: number | undefined;

  constructor(
    readonly request: RpcRequest,
    readonly headers: ForwardHeaders,
    readonly ctx: RouteContext,
    now: number,
    readonly policy: RoutePolicy,
    /** A large answer may come back as a stream (not inside a batch). */
    readonly allowStream: boolean,
    /**
     * Hears how the request ended, with `token`, exactly once. The two come as a pair typed
     * together by the caller (route.ts), so `unknown` here loses nothing.
     */
    readonly onRouted: RouteCallback<unknown>,
    readonly token: unknown,
  ) {
    this.methodId = request.methodId;
    this.headAsk = request.headAsk;
    this.deadline = now + ctx.budgetMs;
    this.round = new AdmissionRound(ctx.table(), now, false, policy.byLatency);
  }

  /** Tells the caller how the request ended (exactly once). */
  finish(result: RouteResult): void {
    this.onRouted(result, this.token);
  }

  /** A group of one candidate (a getter: one field less per request). */
  get size(): number {
    return 1;
  }

  candidate(): Candidate {
    return this;
  }

  get requestBody(): Buffer {
    return this.request.body;
  }

  take(_index: number, attempt: Attempt): void {
    this.attempts++;
    this.ctx.metrics.strategyAttempt(this.policy.strategyIndex);
    this.credits += attempt.credits;
    attempt.subject = this;
  }

  classify(status: number, body: Buffer): Verdict {
    return this.policy.write
      ? classifyWrite(status, body, this.request)
      : classifySingle(status, body, this.request);
  }

  /** Admits the next node of the round's walk, or undefined when the round is over. */
  walk(now: number): Attempt | undefined {
    const round = this.round;
    // Once heads were read at all, a due sample goes to a node whose head is unknown first.
    if (round.cursor === 0 && this.attempts === 0 && round.chain?.active === true) {
      const target = sampleTarget(this, round, now);
      const sampled = target === undefined ? undefined : admit(target, this, round, now);
      if (sampled !== undefined) return sampled;
    }
    while (round.cursor < round.ranked.length) {
      const attempt = admit(round.ranked[round.cursor++]!, this, round, now);
      if (attempt !== undefined) return attempt;
    }
    return undefined;
  }

  newRound(now: number): void {
    this.round = new AdmissionRound(this.ctx.table(), now, this.failOpen, this.policy.byLatency);
  }

  /** The first attempt settled (plain callbacks): the request ends, or the driver goes on. */
  settled(attempt: Attempt): void {
    let result: RouteResult | undefined;
    try {
      result = this.settle(attempt);
    } catch (err) {
      result = this.failed(err);
    }
    if (result === undefined) continueRouting(this, ONE_AT_A_TIME);
    else this.finish(result);
  }

  /** What a settled attempt means for the request: its result, or undefined to go on. */
  settle(attempt: Attempt): RouteResult | undefined {
    if (attempt.state === 'failed') return this.failed(attempt.error);
    if (attempt.state === 'abandoned') return this.giveUp('timeout');
    const verdict = attempt.verdict!;
    const response = attempt.response!;
    if (verdict.kind === 'success') heardAnswer(this, attempt.endedAt, this.ctx.events);
    // One array load for a method that shows no head; a byte scan for one that does.
    if (response.kind === 'answer' && methodHeads(this.methodId)?.reads !== undefined) {
      if (this.#readHeads(attempt, verdict, response.body)) return undefined;
    }
    if (verdict.kind !== 'retry') return this.answer(attempt);
    if (!verdict.relayable || response.kind !== 'answer') return undefined;
    const key = verdict.penalty === 'disputed' ? errorKeyOf(response.body) : undefined;
    const { node, endedAt } = attempt;
    return heardError(this, node, verdict, key, attempt, endedAt, this.ctx.events)
      ? this.answer(attempt)
      : undefined;
  }

  /**
   * Reads the node's head from its answer; true when the answer is too stale to relay and a
   * fresher node can still take the request (counted, the node not penalized: being behind
   * is not failing). The stale answer is held: if no fresher answer comes, it is relayed.
   */
  #readHeads(attempt: Attempt, verdict: Verdict, body: Buffer): boolean {
    const chain = this.round.chain;
    const heads = methodHeads(this.methodId)!;
    if (chain === undefined || (verdict.kind === 'success' && heads.reads === Reads.nothing)) {
      return false;
    }
    const now = attempt.endedAt;
    const node = attempt.node;
    const found = readAnswer(chain, node.heads, heads, this, body, verdict.kind !== 'success', now);
    // eth_getLogs is judged by the node's known head even when its answer shows no block.
    if (!found && heads.blockParam !== LOGS_FILTER) return false;
    if (verdict.kind !== 'success' || !staleAnswer(chain, node, this, this.round, now))
      return false;
    node.metrics.staleAnswer?.(attempt.credits);
    this.held = attempt;
    return true;
  }

  /** The request is answered by `attempt`'s response. */
  answer(attempt: Attempt): RouteResult {
    const response = attempt.response!;
    if (response.kind !== 'answer' && response.kind !== 'stream') return this.giveUp('exhausted');
    this.status = response.status;
    this.contentType = response.contentType;
    this.body = response.kind === 'stream' ? response.stream : response.body;
    this.node = attempt.node.name;
    return this;
  }

  /** Routing is over without a final answer: an upstream's error if one came, else ours. */
  giveUp(kind: 'exhausted' | 'timeout'): RouteResult {
    if (this.held !== undefined) return this.answer(this.held);
    return { kind, attempts: this.attempts, credits: this.credits };
  }

  failed(error: unknown): RouteResult {
    return { kind: 'failed', error, attempts: this.attempts, credits: this.credits };
  }

  /** Sends `attempt` and reads it back: the request's result, or NEXT. */
  async sendOne(attempt: Attempt): Promise<Played<RouteResult>> {
    const now = this.ctx.clock.now();
    await settleAttempt(attempt, this.request.body, this.headers, this.allowStream, now);
    return this.settle(attempt) ?? NEXT;
  }
}

/** The `cost` and `latency` strategies: one attempt at a time, along the round's order. */
export const ONE_AT_A_TIME: RoundStrategy<RequestRoute, RouteResult> = {
  play(route, now) {
    const attempt = route.walk(now);
    return attempt === undefined ? Promise.resolve(IDLE) : route.sendOne(attempt);
  },
  playWaited: (route, attempt) => route.sendOne(attempt),
  giveUp: (route, kind) => route.giveUp(kind),
};

/** Drives the request on with `strategy`, then tells the caller how it ended. */
export function continueRouting(
  route: RequestRoute,
  strategy: RoundStrategy<RequestRoute, RouteResult>,
): void {
  drive(route, strategy).then(
    (result) => route.finish(result),
    (err: unknown) => route.finish(route.failed(err)),
  );
}

/**
 * Starts a single request's route: its first walk and attempt as plain callbacks (no promise
 * on the common path), the round driver only when the first walk finds no node to send to now.
 */
export function startRoute(
  route: RequestRoute,
  body: Buffer,
  headers: ForwardHeaders,
  allowStream: boolean,
  now: number,
): void {
  let attempt: Attempt | undefined;
  try {
    attempt = route.walk(now);
  } catch (err) {
    route.finish(route.failed(err));
    return;
  }
  if (attempt === undefined) {
    continueRouting(route, ONE_AT_A_TIME);
    return;
  }
  sendAttempt(attempt, route, body, headers, allowStream, now);
}
