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

/**
 * Sends one attempt on a node the caller has admitted (permit held, token taken, credits
 * booked), then applies its consequences: the metric, the penalty or the latency sample.
 * Releases the permit on every path — for a streamed answer, when the stream is over.
 */
export function sendAttempt(
  node: UpstreamNode,
  body: Buffer,
  classify: AnswerClassifier,
  headers: ForwardHeaders,
  deadline: number,
  ctx: AttemptContext,
  allowStream: boolean,
): Promise<AttemptResult> {
  const sentAt = ctx.clock.now();
  const remaining = deadline - sentAt;
  const budgetBound = remaining < ctx.attemptTimeoutMs;
  const timeout = Math.min(ctx.attemptTimeoutMs, Math.max(remaining, 1));
  return new Promise((resolve, reject) => {
    node.transport.send(body, timeout, headers, allowStream, (response) => {
      if (response.kind === 'stream') response.stream.onFinish(() => node.permits.release());
      else node.permits.release();
      try {
        resolve(recordAttempt(node, response, classify, sentAt, budgetBound, ctx));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  });
}

/** Classifies an attempt's response and applies its consequences (metric, penalty, EMA). */
function recordAttempt(
  node: UpstreamNode,
  response: AttemptResponse,
  classify: AnswerClassifier,
  sentAt: number,
  budgetBound: boolean,
  ctx: AttemptContext,
): AttemptResult {
  if (
    (response.kind === 'transport_error' || response.kind === 'body_error') &&
    response.timedOut &&
    budgetBound
  ) {
    return ABANDONED;
  }
  const now = ctx.clock.now();
  const verdict = verdictOf(response, classify);
  node.metrics.attempt(verdict.outcome, (now - sentAt) / 1000);
  applyVerdict(node, response, verdict, now - sentAt, now, ctx.events);
  return { kind: 'done', verdict, response };
}
