/**
 * The batch entry (docs/routing.md §4, "Batches"): every element is routed exactly as the same
 * request sent alone would be, through the same round driver. The read elements are driven as
 * one route in which each walks its own policy's order, and the elements a node takes in a
 * round travel to it as one sub-batch (batch-reads.ts). Elements whose policy is routed alone —
 * writes (never resent blindly) and hedged reads (the hedge race is per request) — go one by
 * one through the single-request driver (batch-writes.ts). All share the batch's budget and
 * totals.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import { ERROR_MESSAGE, RPC_ERROR, errorJson } from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import { BatchReads, SUB_BATCHES, type BatchTotals, type Pending } from './batch-reads.js';
import { routeWriteElement } from './batch-writes.js';
import { drive } from './round-driver.js';
import { unansweredJson } from './route-answer.js';
import type { RouteContext } from './route-context.js';
import { TriedNodes } from './tried-nodes.js';

/** What a batch request produced. */
export interface BatchResult {
  /** The JSON array to return, or '' when every element was a notification. */
  readonly body: string;
  /** True when at least one element was answered by a node. */
  readonly forwarded: boolean;
  readonly timedOut: boolean;
  readonly attempts: number;
  readonly credits: number;
  /** Nodes that answered elements, in first-answer order. */
  readonly nodes: readonly string[];
  /** Each element's upstream answer (client id in place), by input index; undefined if none. */
  readonly answers: readonly (string | undefined)[];
  /** Each element's part of `body`, by input index; undefined for a notification. */
  readonly texts: readonly (string | undefined)[];
}

/** A batch none of whose elements reached routing (all cached, coalesced or refused). */
export const NOTHING_ROUTED: BatchResult = {
  body: '',
  forwarded: false,
  timedOut: false,
  attempts: 0,
  credits: 0,
  nodes: [],
  answers: [],
  texts: [],
};

/** Request-lifetime state of a batch: its elements, and what routing them added up. */
class BatchRoute implements BatchTotals {
  attempts = 0;
  credits = 0;
  forwarded = false;
  readonly nodes: string[] = [];

  constructor(
    readonly pending: Pending[],
    readonly headers: ForwardHeaders,
    readonly deadline: number,
    readonly ctx: RouteContext,
  ) {}
}

function assemble(state: BatchRoute, timedOut: boolean): BatchResult {
  const parts: string[] = [];
  const answers: (string | undefined)[] = [];
  const texts: (string | undefined)[] = [];
  for (const progress of state.pending) {
    const idJson = progress.element.idJson;
    // Never a synthetic error where an upstream answered: its error goes back instead.
    const upstream = progress.answer ?? progress.held;
    const routed = idJson !== undefined && progress.element.method !== undefined;
    answers.push(routed ? upstream : undefined);
    if (idJson === undefined) {
      texts.push(undefined);
      continue;
    }
    if (upstream !== undefined && progress.held === upstream) state.forwarded = true;
    const text = upstream ?? unansweredJson(timedOut, idJson);
    texts.push(text);
    parts.push(text);
  }
  const body = parts.length === 0 ? '' : `[${parts.join(',')}]`;
  return {
    body,
    forwarded: state.forwarded,
    timedOut,
    attempts: state.attempts,
    credits: state.credits,
    nodes: state.nodes,
    answers,
    texts,
  };
}

function pendingOf(element: BatchElement): Pending {
  const progress: Pending = {
    element,
    methodId: element.methodId,
    answer: undefined,
    done: false,
    tried: new TriedNodes(),
    latency: false,
    claimed: false,
    held: undefined,
    disputes: undefined,
  };
  if (element.method === undefined) {
    progress.answer = errorJson(
      RPC_ERROR.invalidRequest,
      ERROR_MESSAGE.invalidRequest,
      element.idJson ?? 'null',
    );
    progress.done = true;
  }
  return progress;
}

/**
 * True when `element` is routed on its own, as the same request alone would be: a write, or
 * a read whose policy hedges.
 */
function routedAlone(element: BatchElement, ctx: RouteContext): boolean {
  return (
    element.method !== undefined &&
    ctx.policies !== undefined &&
    ctx.policies().of(element.methodId).special
  );
}

/** True when `element`'s policy walks fastest-first. */
function byLatency(element: BatchElement, ctx: RouteContext): boolean {
  return ctx.policies !== undefined && ctx.policies().of(element.methodId).byLatency;
}

/** Routes the batch's lone elements one by one (batch-writes.ts), into their places. */
async function routeAlone(state: BatchRoute, alone: readonly Pending[]): Promise<void> {
  await Promise.all(
    alone.map(async (progress) => {
      const result = await routeWriteElement(progress.element, state.headers, state.ctx);
      progress.answer = result.answer;
      state.attempts += result.attempts;
      state.credits += result.credits;
      if (result.forwarded) state.forwarded = true;
      if (result.node !== undefined && !state.nodes.includes(result.node)) {
        state.nodes.push(result.node);
      }
    }),
  );
}

/** Drives the read elements; true when the budget ran out with some still open. */
async function routeReads(state: BatchRoute, reads: Pending[]): Promise<boolean> {
  if (reads.length === 0) return false;
  const end = await drive(new BatchReads(reads, state), SUB_BATCHES);
  return end.timedOut;
}

/** Routes the valid elements of a batch; invalid ones are answered in place. */
export async function routeBatch(
  elements: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: RouteContext,
): Promise<BatchResult> {
  const state = new BatchRoute(
    elements.map(pendingOf),
    headers,
    ctx.clock.now() + ctx.budgetMs,
    ctx,
  );
  const alone: Pending[] = [];
  const reads: Pending[] = [];
  for (const progress of state.pending) {
    if (progress.done) continue;
    if (routedAlone(progress.element, ctx)) {
      alone.push(progress);
      progress.done = true; // not the batch path's to route
    } else {
      progress.latency = byLatency(progress.element, ctx);
      reads.push(progress);
    }
  }
  const [timedOut] = await Promise.all([routeReads(state, reads), routeAlone(state, alone)]);
  return assemble(state, timedOut);
}
