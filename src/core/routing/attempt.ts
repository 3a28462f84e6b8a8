import type { Clock } from '../clock.js';
import type { AttemptResponse, ForwardHeaders } from '../node/http-transport.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { penaltySeconds } from '../node/penalty.js';
import { AttemptOutcome } from '../metrics.js';
import {
  BODY_ERROR,
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
  recovered(node: UpstreamNode): void;
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
  if (response.kind !== 'answer') return response.reason;
  return verdict.kind === 'final'
    ? `HTTP ${response.status}`
    : `HTTP ${response.status}, ${verdict.outcome === AttemptOutcome.invalidJson ? 'invalid JSON-RPC answer' : 'JSON-RPC error'}`;
}

/**
 * Sends one attempt on a node the caller has admitted (permit held, token taken, credits
 * booked), then applies its consequences: the metric, the penalty or the latency sample.
 * Releases the permit on every path.
 */
export async function sendAttempt(
  node: UpstreamNode,
  body: Buffer,
  classify: AnswerClassifier,
  headers: ForwardHeaders,
  limits: { readonly deadline: number; readonly attemptTimeoutMs: number },
  clock: Clock,
  events: RouteEvents,
): Promise<AttemptResult> {
  const sentAt = clock.now();
  const remaining = limits.deadline - sentAt;
  const budgetBound = remaining < limits.attemptTimeoutMs;
  let response: AttemptResponse;
  try {
    response = await node.transport.send(
      body,
      Math.min(limits.attemptTimeoutMs, Math.max(remaining, 1)),
      headers,
    );
  } finally {
    node.permits.release();
  }
  if (response.kind !== 'answer' && response.timedOut && budgetBound) return ABANDONED;
  const now = clock.now();
  const verdict =
    response.kind === 'answer'
      ? classify(response.status, response.body)
      : response.kind === 'body_error'
        ? BODY_ERROR
        : TRANSPORT_ERROR;
  node.metrics.attempt(verdict.outcome, (now - sentAt) / 1000);
  if (verdict.kind === 'success') {
    node.ema.observe(now - sentAt);
    if (node.penalty.until !== 0) {
      const wasActive = node.penalty.isActive(now);
      node.penalty.clear();
      if (wasActive) events.recovered(node);
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
  return { kind: 'done', verdict, response };
}
