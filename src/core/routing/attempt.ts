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
  | { readonly kind: 'done'; readonly verdict: Verdict; readonly response: AttemptResponse }
  /** The request budget ran out while waiting: nothing is classified or penalized. */
  | { readonly kind: 'abandoned' };

/**
 * Where an attempt's result goes: the router's per-request state, or a promise. `verdict` is
 * undefined when the request budget ran out while waiting (nothing classified or penalized);
 * `endedAt` is the clock reading taken for it (callers reuse it instead of reading again).
 */
export interface AttemptSink {
  attemptDone(
    verdict: Verdict | undefined,
    response: AttemptResponse,
    node: UpstreamNode,
    endedAt: number,
  ): void;
  /** Recording the attempt threw (a bug): the request must still be answered. */
  attemptFailed(err: unknown): void;
}

/**
 * One attempt in flight: what its response callback needs, as one object. The router's
 * per-request state is its own flight (a request has one attempt out at a time), so the
 * common request allocates nothing for it.
 */
export interface AttemptFlight {
  readonly node: UpstreamNode | undefined;
  readonly classify: AnswerClassifier;
  readonly sentAt: number;
  /** Set by startAttempt: the budget shortened this attempt's deadline. */
  budgetBound: boolean;
  /** The request's deadline. */
  readonly deadline: number;
  readonly ctx: AttemptContext;
  readonly sink: AttemptSink;
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

function onResponse(response: AttemptResponse, flight: AttemptFlight): void {
  const node = flight.node!;
  if (response.kind === 'stream') response.stream.onFinish(() => node.permits.release());
  else node.permits.release();
  const sink = flight.sink;
  const now = flight.ctx.clock.now();
  let verdict: Verdict | undefined;
  try {
    verdict = recordAttempt(node, response, flight, now);
  } catch (err) {
    sink.attemptFailed(err);
    return;
  }
  sink.attemptDone(verdict, response, node, now);
}

/**
 * Sends one attempt on `flight.node`, which the caller has admitted (permit held, token
 * taken, credits booked), then applies its consequences — the metric, the penalty or the
 * latency sample — and hands the verdict to `flight.sink`. `flight.sentAt` is the caller's
 * latest clock reading. Releases the permit on every path; for a stream, when it is over.
 */
export function startAttempt(
  flight: AttemptFlight,
  body: Buffer,
  headers: ForwardHeaders,
  allowStream: boolean,
): void {
  const attemptTimeoutMs = flight.ctx.attemptTimeoutMs;
  const remaining = flight.deadline - flight.sentAt;
  // The budget, not the node, ends an attempt whose deadline it shortened.
  flight.budgetBound = remaining < attemptTimeoutMs;
  const timeout = Math.min(attemptTimeoutMs, Math.max(remaining, 1));
  flight.node!.transport.send(body, timeout, headers, allowStream, onResponse, flight);
}

/** A flight of its own, settling a promise (for batches, off the single-request path). */
class PromisedFlight implements AttemptFlight, AttemptSink {
  budgetBound = false;
  readonly sink = this;

  constructor(
    readonly node: UpstreamNode,
    readonly classify: AnswerClassifier,
    readonly sentAt: number,
    readonly deadline: number,
    readonly ctx: AttemptContext,
    private readonly resolve: (result: AttemptResult) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  attemptDone(verdict: Verdict | undefined, response: AttemptResponse): void {
    this.resolve(verdict === undefined ? ABANDONED : { kind: 'done', verdict, response });
  }

  attemptFailed(err: unknown): void {
    this.reject(err);
  }
}

/** startAttempt as a promise of the attempt's result. */
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
    const flight = new PromisedFlight(
      node,
      classify,
      ctx.clock.now(),
      deadline,
      ctx,
      resolve,
      reject,
    );
    startAttempt(flight, body, headers, allowStream);
  });
}

/**
 * Classifies an attempt's response and applies its consequences (metric, penalty, EMA);
 * undefined when the attempt was cut off by the request budget.
 */
function recordAttempt(
  node: UpstreamNode,
  response: AttemptResponse,
  flight: AttemptFlight,
  now: number,
): Verdict | undefined {
  if (
    (response.kind === 'transport_error' || response.kind === 'body_error') &&
    response.timedOut &&
    // Cut off by the budget: its deadline was shortened to the budget's end, or its own
    // deadline coincided with the end (a timer can fire a little early), so the request is
    // over and the node was not given its full attempt time.
    (flight.budgetBound || now >= flight.deadline - TIMER_EARLY_MS)
  ) {
    return undefined;
  }
  const verdict = verdictOf(response, flight.classify);
  node.metrics.attempt(verdict.outcome, (now - flight.sentAt) / 1000);
  applyVerdict(node, response, verdict, now - flight.sentAt, now, flight.ctx.events);
  return verdict;
}
