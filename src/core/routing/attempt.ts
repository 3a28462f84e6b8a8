/**
 * One attempt: a request (or sub-batch) sent to one admitted node. Admission creates the
 * Attempt holding the node's permit and the credits it booked; sending it settles it into a
 * value — `done` with its verdict and response, or `abandoned` when the request's budget ran
 * out first — after its consequences for the node (metric, penalty, latency sample) are applied.
 * The permit is released exactly once, by whatever ends the attempt: its answer, the end of a
 * streamed answer, an abort, or the deadline.
 */
import type { Clock } from '../clock.js';
import { AttemptOutcome } from '../metrics.js';
import type { AttemptControl, AttemptResponse, ForwardHeaders } from '../node/attempt-response.js';
import { penaltySeconds } from '../node/penalty.js';
import type { ProviderAccount } from '../node/provider-account.js';
import type { UpstreamNode, UsageCounter } from '../node/upstream-node.js';
import type { StreamEnd } from '../node/upstream-stream.js';
import { logsLimitOfAnswer } from '../protocol/logs-limit-errors.js';
import {
  BODY_ERROR,
  LOGS_LIMIT_ERROR,
  SUCCESS,
  TRANSPORT_ERROR,
  retryAfterSeconds,
  type Verdict,
} from './classify.js';

/** Things worth a log line that happen to nodes while routing. */
export interface RouteEvents {
  /** A node was penalized (or its penalty extended). */
  penalized(node: UpstreamNode, reason: string, seconds: number): void;
  /** A penalized node answered successfully again. */
  recovered(node: UpstreamNode, penalizedSeconds: number): void;
  /** A node's error taught (or lowered) its eth_getLogs limits (node.logsLimits). */
  logsLimitLearned?(node: UpstreamNode): void;
}

/** What sending an attempt needs from the router. */
export interface AttemptContext {
  readonly clock: Clock;
  readonly events: RouteEvents;
  /** Per-attempt deadline (500 ms). */
  readonly attemptTimeoutMs: number;
}

/**
 * What an attempt carries and on whose behalf: the request (or sub-batch) sent, which reads
 * its own answers, and the budget it runs in. The single request is its own subject; a batch
 * makes one per sub-batch.
 */
export interface AttemptSubject {
  readonly ctx: AttemptContext;
  /** The request's deadline (clock reading). */
  readonly deadline: number;
  /** Turns an answer that arrived whole into a verdict, knowing what was sent. */
  classify(status: number, body: Buffer): Verdict;
}

/** Hears an attempt settle: a request's state, a race of attempts, or a promise. */
export interface AttemptOwner {
  settled(attempt: Attempt): void;
}

/** Timers may fire up to a millisecond before the deadline they were set for. */
const TIMER_EARLY_MS = 1;

/** The owner of an attempt not sent yet: nothing can settle it. */
const UNSENT: AttemptOwner = {
  settled() {
    throw new Error('an attempt settled before it was sent');
  },
};

/** An admitted attempt, then its result. */
export class Attempt {
  /** Credits booked for it. */
  credits = 0;
  /** Batch elements it carries (1 for a single request). */
  taken = 0;
  /** Clock reading when it was sent. */
  sentAt = 0;
  /**
   * `cancelled`: given up by its request while in flight (a hedge race was decided), it settles
   * `abandoned` with no verdict and no penalty. `failed`: recording the result threw (a bug);
   * `error` says what, the client still gets an answer.
   */
  state: 'admitted' | 'cancelled' | 'done' | 'abandoned' | 'failed' = 'admitted';
  error: unknown = undefined;
  verdict: Verdict | undefined = undefined;
  response: AttemptResponse | undefined = undefined;
  /** Clock reading when it settled. */
  endedAt = 0;
  /** What was sent (set when a candidate is taken). */
  subject: AttemptSubject | undefined = undefined;
  /** Who hears the result (given when it is sent). */
  owner: AttemptOwner = UNSENT;
  /** The transport's handle on the request in flight. */
  control: AttemptControl | undefined = undefined;
  #released = false;
  /** The node's provider account when it was admitted: it holds one of its permits too. */
  readonly #account: ProviderAccount | undefined;
  /**
   * Where its credits were booked: the node's usage as billed when it was admitted. A reload
   * may bill the node to another account meanwhile; a refund must reach the pool that was
   * charged, not the new one.
   */
  readonly usage: UsageCounter;

  constructor(readonly node: UpstreamNode) {
    this.#account = node.account;
    this.usage = node.usage;
  }

  /** Gives the node's permit (and its account's) back; only the first call counts. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.node.permits.release();
    this.#account?.permits.release();
  }

  /**
   * Gives up an attempt whose answer nobody wants any more: one still in flight is aborted
   * (its permit comes back at once, its node is not judged); a streamed answer that already
   * arrived is aborted too. Its credits stay booked: the node may have served it.
   */
  cancel(): void {
    if (this.state === 'admitted') {
      this.state = 'cancelled';
      this.control?.cancel();
    } else if (this.response?.kind === 'stream') {
      this.response.stream.abort(new Error('another attempt answered first'));
    }
  }

  /** True once the permit is back. */
  get released(): boolean {
    return this.#released;
  }
}

function reasonOf(response: AttemptResponse, verdict: Verdict): string {
  if (response.kind === 'transport_error' || response.kind === 'body_error') return response.reason;
  if (verdict.kind === 'final') return `HTTP ${response.status}`;
  const what =
    verdict.outcome === AttemptOutcome.invalidJson ? 'invalid JSON-RPC answer' : 'JSON-RPC error';
  return `HTTP ${response.status}, ${what}`;
}

function verdictOf(subject: AttemptSubject, response: AttemptResponse): Verdict {
  switch (response.kind) {
    case 'answer':
      return subject.classify(response.status, response.body);
    case 'stream':
      return SUCCESS;
    case 'body_error':
      return BODY_ERROR;
    default:
      return TRANSPORT_ERROR;
  }
}

/** Penalizes `node` for a failure (logging only the transition into a penalty). */
export function penalizeNode(
  node: UpstreamNode,
  reason: string,
  retryAfter: number,
  now: number,
  events: RouteEvents,
): void {
  // During an outage every fail-open attempt fails again: log the transition only.
  const wasActive = node.penalty.isActive(now);
  node.penalty.penalize(now, retryAfter);
  node.penaltyReason = reason;
  if (!wasActive) events.penalized(node, reason, penaltySeconds(retryAfter));
}

/**
 * Lifts `node`'s penalty (a successful answer, or proof that a write it timed out on had
 * landed), logging the recovery when one was in force. The one place a penalty is cleared.
 */
export function clearPenalty(node: UpstreamNode, now: number, events: RouteEvents): void {
  if (node.penalty.until === 0) return;
  const wasActive = node.penalty.isActive(now);
  const since = node.penalty.since;
  node.penalty.clear();
  if (wasActive) events.recovered(node, Math.round((now - since) / 100) / 10);
}

/** Applies a settled attempt's consequences for its node (metric, penalty, latency sample). */
function record(
  attempt: Attempt,
  ctx: AttemptContext,
  verdict: Verdict,
  response: AttemptResponse,
  now: number,
): void {
  const node = attempt.node;
  const roundTrip = now - attempt.sentAt;
  node.metrics.attempt(verdict.outcome, roundTrip / 1000);
  node.attempts++;
  if (verdict.kind !== 'success') node.failures++;
  if (verdict.kind === 'success') {
    node.ema.observe(roundTrip);
    clearPenalty(node, now, ctx.events);
  } else if (verdict.penalty === 'now') {
    const asked =
      response.kind === 'answer'
        ? retryAfterSeconds(response.status, response.retryAfter, ctx.clock.wallNow())
        : 0;
    penalizeNode(node, reasonOf(response, verdict), asked, now, ctx.events);
  } else if (verdict === LOGS_LIMIT_ERROR && response.kind === 'answer') {
    learnLogsLimit(node, response.body, ctx.events);
  }
}

/** Records the eth_getLogs limit a node's error stated (protocol/logs-limit-errors.ts). */
export function learnLogsLimit(node: UpstreamNode, body: Buffer, events: RouteEvents): void {
  const hint = logsLimitOfAnswer(body);
  if (hint !== undefined && node.logsLimits.learn(hint)) events.logsLimitLearned?.(node);
}

/**
 * A streamed answer is over: the permit comes back. A body the upstream broke after the client
 * had its first bytes cannot be retried; it is counted and the node penalized (its fault).
 */
function streamFinished(attempt: Attempt, end: StreamEnd): void {
  attempt.release();
  if (end !== 'upstream_broke') return;
  const ctx = attempt.subject!.ctx;
  attempt.node.metrics.streamBroken();
  penalizeNode(attempt.node, 'streamed answer broke off', 0, ctx.clock.now(), ctx.events);
}

/** The budget, not the node, ends an attempt whose deadline it shortened when it was sent. */
function budgetBound(attempt: Attempt, subject: AttemptSubject): boolean {
  return subject.deadline - attempt.sentAt < subject.ctx.attemptTimeoutMs;
}

/** The transport's callback: settles the attempt and hands it to its owner. */
function onResponse(response: AttemptResponse, attempt: Attempt): void {
  if (response.kind === 'stream') response.stream.onFinish((end) => streamFinished(attempt, end));
  else attempt.release();
  // Never written to a connection (refused, or given up while waiting for one): the
  // provider saw nothing and bills nothing, so neither do we.
  if (response.kind === 'transport_error' && !response.sent) attempt.usage.add(-attempt.credits);
  const subject = attempt.subject!;
  const now = subject.ctx.clock.now();
  attempt.endedAt = now;
  attempt.response = response;
  if (attempt.state === 'cancelled') {
    // Given up by the request: the other attempt's answer is the one that counts.
    attempt.state = 'abandoned';
  } else if (
    (response.kind === 'transport_error' || response.kind === 'body_error') &&
    response.timedOut &&
    // Cut off by the budget: its deadline was shortened to the budget's end, or its own
    // deadline coincided with the end (a timer can fire a little early), so the request is
    // over and the node was not given its full attempt time.
    (budgetBound(attempt, subject) || now >= subject.deadline - TIMER_EARLY_MS)
  ) {
    attempt.state = 'abandoned';
  } else {
    try {
      const verdict = verdictOf(subject, response);
      attempt.verdict = verdict;
      attempt.state = 'done';
      record(attempt, subject.ctx, verdict, response, now);
    } catch (err) {
      attempt.state = 'failed';
      attempt.error = err;
    }
  }
  attempt.owner.settled(attempt);
}

/**
 * Sends an admitted attempt (its subject set); `owner.settled(attempt)` is called exactly once
 * with it settled.
 * `now` is the caller's latest clock reading; with `allowStream`, a large successful answer
 * comes back as a stream the owner must pipe or abort.
 */
export function sendAttempt(
  attempt: Attempt,
  owner: AttemptOwner,
  body: Buffer,
  headers: ForwardHeaders,
  allowStream: boolean,
  now: number,
): void {
  const subject = attempt.subject!;
  const ctx = subject.ctx;
  attempt.owner = owner;
  attempt.sentAt = now;
  const remaining = subject.deadline - now;
  const timeout = Math.min(ctx.attemptTimeoutMs, Math.max(remaining, 1));
  attempt.control = attempt.node.transport.send(
    body,
    timeout,
    headers,
    allowStream,
    onResponse,
    attempt,
    now,
  );
}

/** sendAttempt as a promise of the settled attempt (for retries and batches). */
export function settleAttempt(
  attempt: Attempt,
  body: Buffer,
  headers: ForwardHeaders,
  allowStream: boolean,
  now: number,
): Promise<Attempt> {
  return new Promise((resolve) => {
    sendAttempt(attempt, { settled: resolve }, body, headers, allowStream, now);
  });
}
