/**
 * Routing for JSON-RPC batches: every element is priced, admitted and retried on its own, but
 * elements that land on the same node in the same round travel to it as one upstream request.
 *
 * A round walks the ranked table once. Each node takes, in request order, the pending elements
 * it has not tried yet, as long as it prices them, stays under its credit threshold and has
 * rate tokens (one per element); one concurrency permit covers the node's whole sub-batch. The
 * round's sub-batches are sent in parallel. Elements a node failed (or answered with a server
 * error) stay pending for the next round, on another node; each node is tried at most once per
 * element. Waiting, fail-open and the 1 s budget work as for a single request.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import { SkipReason } from '../metrics.js';
import type { ForwardHeaders } from '../node/http-transport.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { ERROR_MESSAGE, RPC_ERROR, errorJson } from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import { sendAttempt } from './attempt.js';
import { readSubBatchAnswer, subBatchBody, type ElementProgress } from './batch-answer.js';
import type { RouteContext } from './route.js';

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
}

/** One element's routing state. */
interface Pending extends ElementProgress {
  readonly tried: UpstreamNode[];
}

/** What one round observed. */
interface Round {
  minWait: number;
  firstSaturated: UpstreamNode | undefined;
  sawPenalized: boolean;
  dispatched: Array<Promise<void>>;
  /** The node set the round walked (changes only on reload). */
  nodes: readonly UpstreamNode[];
}

class BatchRouting {
  attempts = 0;
  credits = 0;
  forwarded = false;
  failOpen = false;
  readonly nodes: string[] = [];

  constructor(
    readonly pending: Pending[],
    readonly headers: ForwardHeaders,
    readonly deadline: number,
    readonly ctx: RouteContext,
  ) {}

  open(): Pending[] {
    return this.pending.filter((p) => !p.done);
  }
}

/** Picks, for `node`, the open elements it can take now; books their prices. */
function takeElements(
  node: UpstreamNode,
  open: Pending[],
  claimed: Set<Pending>,
  round: Round,
  state: BatchRouting,
): Pending[] {
  const taken: Pending[] = [];
  let unsupported = false;
  const now = state.ctx.clock.now();
  for (const progress of open) {
    if (claimed.has(progress) || progress.tried.includes(node)) continue;
    const cost = priceOf(node.config.pricing, progress.element.methodId);
    if (cost === UNPRICED) {
      progress.tried.push(node);
      unsupported = true;
      continue;
    }
    if (node.usage.used > node.config.spilloverThreshold) {
      node.metrics.skip(SkipReason.quotaExhausted);
      break;
    }
    const wait = node.takeToken(now);
    if (wait > 0) {
      node.metrics.skip(SkipReason.rateLimit);
      if (wait < round.minWait) round.minWait = wait;
      break;
    }
    node.usage.add(cost);
    state.credits += cost;
    progress.tried.push(node);
    claimed.add(progress);
    taken.push(progress);
  }
  if (unsupported) node.metrics.skip(SkipReason.methodUnsupported);
  return taken;
}

async function dispatch(
  node: UpstreamNode,
  elements: Pending[],
  state: BatchRouting,
): Promise<void> {
  state.attempts++;
  let body: Buffer;
  try {
    body = subBatchBody(elements);
  } catch {
    // Unreachable for elements parseRequest accepted; never leak the permit if it happens.
    node.permits.release();
    for (const p of elements) {
      p.answer = errorJson(
        RPC_ERROR.invalidRequest,
        ERROR_MESSAGE.invalidRequest,
        p.element.idJson ?? 'null',
      );
      p.done = true;
    }
    return;
  }
  const classify = (status: number, answer: Buffer) => readSubBatchAnswer(status, answer, elements);
  const result = await sendAttempt(
    node,
    body,
    classify,
    state.headers,
    state.deadline,
    state.ctx,
    false,
  );
  if (result.kind === 'done' && elements.some((p) => p.done)) {
    state.forwarded = true;
    if (!state.nodes.includes(node.name)) state.nodes.push(node.name);
  }
}

function runRound(state: BatchRouting): Round {
  const table = state.ctx.table();
  const round: Round = {
    minWait: Infinity,
    firstSaturated: undefined,
    sawPenalized: false,
    dispatched: [],
    nodes: table.all,
  };
  const open = state.open();
  const claimed = new Set<Pending>();
  const now = state.ctx.clock.now();
  for (const node of table.ranked) {
    if (claimed.size === open.length) break;
    if (node.retired || !open.some((p) => !claimed.has(p) && !p.tried.includes(node))) continue;
    if (!state.failOpen && node.penalty.isActive(now)) {
      node.metrics.skip(SkipReason.penalized);
      round.sawPenalized = true;
      continue;
    }
    if (!node.permits.tryAcquire()) {
      node.metrics.skip(SkipReason.saturated);
      round.firstSaturated ??= node;
      continue;
    }
    const taken = takeElements(node, open, claimed, round, state);
    if (taken.length === 0) {
      node.permits.release();
      continue;
    }
    round.dispatched.push(dispatch(node, taken, state));
  }
  return round;
}

/** Decides what to do after a round that left elements open; false = give up now. */
async function afterRound(round: Round, state: BatchRouting): Promise<boolean> {
  const remaining = state.deadline - state.ctx.clock.now();
  if (remaining <= 0) return false;
  if (round.dispatched.length > 0) return true;
  if (round.minWait !== Infinity || round.firstSaturated) {
    state.ctx.metrics.sleepQueue(1);
    try {
      if (round.minWait !== Infinity) await sleep(Math.min(round.minWait, remaining));
      else if (await round.firstSaturated!.permits.waitFor(remaining))
        round.firstSaturated!.permits.release();
    } finally {
      state.ctx.metrics.sleepQueue(-1);
    }
    return true;
  }
  if (round.sawPenalized && !state.failOpen) {
    state.failOpen = true;
    return true;
  }
  // A reload published new nodes while the round walked the old set: walk again.
  return state.ctx.table().all !== round.nodes;
}

function assemble(state: BatchRouting, timedOut: boolean): BatchResult {
  const message = timedOut ? ERROR_MESSAGE.globalTimeout : ERROR_MESSAGE.allFailed;
  const parts: string[] = [];
  for (const progress of state.pending) {
    const idJson = progress.element.idJson;
    if (idJson === undefined) continue;
    parts.push(progress.answer ?? errorJson(RPC_ERROR.serverError, message, idJson));
  }
  const body = parts.length === 0 ? '' : `[${parts.join(',')}]`;
  return {
    body,
    forwarded: state.forwarded,
    timedOut,
    attempts: state.attempts,
    credits: state.credits,
    nodes: state.nodes,
  };
}

/** Routes the valid elements of a batch; invalid ones are answered by the caller. */
export async function routeBatch(
  elements: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: RouteContext,
): Promise<BatchResult> {
  const pending: Pending[] = elements.map((element) => ({
    element,
    answer: undefined,
    done: false,
    tried: [],
  }));
  for (const progress of pending) {
    if (progress.element.method !== undefined) continue;
    progress.answer = errorJson(
      RPC_ERROR.invalidRequest,
      ERROR_MESSAGE.invalidRequest,
      progress.element.idJson ?? 'null',
    );
    progress.done = true;
  }
  const state = new BatchRouting(pending, headers, ctx.clock.now() + ctx.budgetMs, ctx);
  while (state.open().length > 0) {
    if (ctx.clock.now() >= state.deadline) return assemble(state, true);
    const round = runRound(state);
    await Promise.all(round.dispatched);
    if (state.open().length === 0) break;
    if (!(await afterRound(round, state)))
      return assemble(state, ctx.clock.now() >= state.deadline);
  }
  return assemble(state, false);
}
