import type { Clock } from '../clock.js';
import type { AttemptResponse, ForwardHeaders } from '../node/http-transport.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { penaltySeconds } from '../node/penalty.js';
import { AttemptOutcome } from '../metrics.js';
import {
  BODY_ERROR,
  SUCCESS,
  TRANSPORT_ERROR,
  classifyAnswer,
  retryAfterSeconds,
  type Verdict,
} from './classify.js';

/** Things worth a log line that happen to nodes while routing. */
export interface RouteEvents {
  /** A node was penalized (or its penalty extended). */
  penalized(node: UpstreamNode, reason: string, seconds: number): void;
  /** A penalized node answered successfully again. */
  recovered(node: UpstreamNode, penalizedSeconds: number): void;
}

/** Turns an answer that arrived whole into a verdict (rows 3–6 of the classification). */
export type AnswerClassifier = (status: number, body: Buffer) => Verdict;

/** The classifier of a single (non-batch) request. */
export const classifySingle: AnswerClassifier = (status, body) =>
  classifyAnswer(status, body, false);

/** The result of one attempt the router has to act on. */
export type AttemptResult =
  | {
      readonly kind: 'done';
      readonly verdict: Verdict;
      readonly response: AttemptResponse;
      /** The clock when the attempt ended (callers reuse it instead of reading again). */
      readonly endedAt: number;
    }
  /** The request budget ran out while waiting: nothing is classified or penalized. */
  | { readonly kind: 'abandoned' };

/** Where an attempt's result goes: the router's per-request state, or a promise. */
export interface AttemptSink {
  attemptDone(result: AttemptResult, node: UpstreamNode): void;
  /** Recording the attempt threw (a bug): the request must still be answered. */
  attemptFailed(err: unknown): void;
}

/** Timers may fire up to a millisecond before the deadline they were set for. */
const TIMER_EARLY_MS = 1;

const ABANDONED: AttemptResult = { kind: 'abandoned' };

function reasonOf(response: AttemptResponse, verdict: Verdict): string {
  if (response.kind === 'transport_error' || response.kind === 'body_error') return response.reason;
  if (verdict.kind === 'final') return `HTTP ${response.status}`;
  const what =
    verdict.outcome === AttemptOutcome.invalidJson ? 'invalid JSON-RPC answer' : 'JSON-RPC error';
  return `HTTP ${response.status}, ${what}`;
}

/** What an attempt needs from the router. */
export interface AttemptContext {
  readonly clock: Clock;
  readonly events: RouteEvents;
  /** Per-attempt deadline (500 ms). */
  readonly attemptTimeoutMs: number;
}

function verdictOf(response: AttemptResponse, classify: AnswerClassifier): Verdict {
  switch (response.kind) {
    case 'answer':
      return classify(response.status, response.body);
    case 'stream':
      return SUCCESS;
    case 'body_error':
      return BODY_ERROR;
    default:
      return TRANSPORT_ERROR;
  }
}

function applyVerdict(
  node: UpstreamNode,
  response: AttemptResponse,
  verdict: Verdict,
  roundTripMs: number,
  now: number,
  events: RouteEvents,
): void {
  if (verdict.kind === 'success') {
    node.ema.observe(roundTripMs);
    if (node.penalty.until !== 0) {
      const wasActive = node.penalty.isActive(now);
      const since = node.penalty.since;
      node.penalty.clear();
      if (wasActive) events.recovered(node, Math.round((now - since) / 100) / 10);
    }
  } else if (verdict.penalize) {
    const asked =
      response.kind === 'answer'
        ? retryAfterSeconds(response.status, response.retryAfter, Date.now())
        : 0;
    // Log the transition only: during an outage every fail-open attempt fails again.
    const wasActive = node.penalty.isActive(now);
    node.penalty.penalize(now, asked);
    if (!wasActive) events.penalized(node, reasonOf(response, verdict), penaltySeconds(asked));
  }
}

/** One attempt in flight: what its response callback needs, as one object, not a closure. */
class InFlight {
  constructor(
    readonly node: UpstreamNode,
    readonly classify: AnswerClassifier,
    readonly sentAt: number,
    readonly budgetBound: boolean,
    readonly deadline: number,
    readonly ctx: AttemptContext,
    readonly sink: AttemptSink,
  ) {}
}

function onResponse(response: AttemptResponse, flight: InFlight): void {
  const node = flight.node;
  if (response.kind === 'stream') response.stream.onFinish(() => node.permits.release());
  else node.permits.release();
  let result: AttemptResult;
  try {
    result = recordAttempt(node, response, flight);
  } catch (err) {
    flight.sink.attemptFailed(err);
    return;
  }
  flight.sink.attemptDone(result, node);
}

/**
 * Sends one attempt on a node the caller has admitted (permit held, token taken, credits
 * booked), then applies its consequences — the metric, the penalty or the latency sample —
 * and hands the result to `sink`. `sentAt` is the caller's latest clock reading. Releases the
 * permit on every path; for a streamed answer, when the stream is over.
 */
export function startAttempt(
  node: UpstreamNode,
  body: Buffer,
  classify: AnswerClassifier,
  headers: ForwardHeaders,
  deadline: number,
  sentAt: number,
  ctx: AttemptContext,
  allowStream: boolean,
  sink: AttemptSink,
): void {
  const remaining = deadline - sentAt;
  // The budget, not the node, ends an attempt whose deadline it shortened.
  const budgetBound = remaining < ctx.attemptTimeoutMs;
  const timeout = Math.min(ctx.attemptTimeoutMs, Math.max(remaining, 1));
  const flight = new InFlight(node, classify, sentAt, budgetBound, deadline, ctx, sink);
  node.transport.send(body, timeout, headers, allowStream, onResponse, flight);
}

/** startAttempt as a promise, for callers off the single-request hot path (batches). */
export function sendAttempt(
  node: UpstreamNode,
  body: Buffer,
  classify: AnswerClassifier,
  headers: ForwardHeaders,
  deadline: number,
  ctx: AttemptContext,
  allowStream: boolean,
): Promise<AttemptResult> {
  return new Promise((resolve, reject) => {
    const sink: AttemptSink = { attemptDone: resolve, attemptFailed: reject };
    startAttempt(node, body, classify, headers, deadline, ctx.clock.now(), ctx, allowStream, sink);
  });
}

/** Classifies an attempt's response and applies its consequences (metric, penalty, EMA). */
function recordAttempt(
  node: UpstreamNode,
  response: AttemptResponse,
  flight: InFlight,
): AttemptResult {
  const ctx = flight.ctx;
  const now = ctx.clock.now();
  if (
    (response.kind === 'transport_error' || response.kind === 'body_error') &&
    response.timedOut &&
    // Cut off by the budget: its deadline was shortened to the budget's end, or its own
    // deadline coincided with the end (a timer can fire a little early), so the request is
    // over and the node was not given its full attempt time.
    (flight.budgetBound || now >= flight.deadline - TIMER_EARLY_MS)
  ) {
    return ABANDONED;
  }
  const verdict = verdictOf(response, flight.classify);
  node.metrics.attempt(verdict.outcome, (now - flight.sentAt) / 1000);
  applyVerdict(node, response, verdict, now - flight.sentAt, now, ctx.events);
  return { kind: 'done', verdict, response, endedAt: now };
}
