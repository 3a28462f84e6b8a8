/**
 * The per-request fallback machine (behaviour.md §4.4–4.9, with cascade's §12 changes).
 *
 * A request walks the ranked table in rounds. For each node not yet tried: skip it if
 * penalized (unless failing open), if it does not price the method, or if it is over its
 * credit threshold — the last two before any rate token is spent — then take a permit and a
 * token, book the price and send. A final answer ends the request; a retryable one moves on.
 * When a round serves nothing: sleep until the earliest token if any node was rate-limited,
 * else wait for a permit on the first saturated node, else fail open once if nodes were
 * skipped only for penalties, else 502. Everything runs inside one budget (1 s → 504).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { UNPRICED } from '../config/types.js';
import { priceOf } from '../config/price-list.js';
import { SkipReason, type ProxyMetrics } from '../metrics.js';
import type { ForwardHeaders } from '../node/http-transport.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import type { UpstreamStream } from '../node/upstream-stream.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import { classifySingle, sendAttempt, type AttemptContext } from './attempt.js';
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
  | { readonly kind: 'exhausted' | 'timeout'; readonly attempts: number; readonly credits: number };

/** Per-request routing state; one small object instead of closures. */
class RequestRouting {
  readonly tried: UpstreamNode[] = [];
  failOpen = false;
  attempts = 0;
  credits = 0;
  /** Set by a round: the soonest a rate-limited node has a token (ms), or Infinity. */
  minWait = Infinity;
  firstSaturated: UpstreamNode | undefined = undefined;
  sawPenalized = false;
  /** The node set the last round walked (changes only on reload). */
  roundNodes: readonly UpstreamNode[] = [];

  constructor(
    readonly request: RpcRequest,
    readonly headers: ForwardHeaders,
    readonly deadline: number,
  ) {}

  startRound(): void {
    this.minWait = Infinity;
    this.firstSaturated = undefined;
    this.sawPenalized = false;
  }
}

/** Checks that need no permit or token: price and quota. Returns the cost or -1 (skipped). */
function admissibleCost(node: UpstreamNode, state: RequestRouting): number {
  const cost = priceOf(node.config.pricing, state.request.methodId);
  if (cost === UNPRICED) {
    node.metrics.skip(SkipReason.methodUnsupported);
    state.tried.push(node);
    return -1;
  }
  if (node.usage.used > node.config.spilloverThreshold) {
    node.metrics.skip(SkipReason.quotaExhausted);
    state.tried.push(node);
    return -1;
  }
  return cost;
}

type Served = RouteResult | undefined;

async function dial(
  node: UpstreamNode,
  cost: number,
  state: RequestRouting,
  ctx: RouteContext,
): Promise<Served> {
  node.usage.add(cost);
  state.credits += cost;
  state.attempts++;
  state.tried.push(node);
  const result = await sendAttempt(
    node,
    state.request.body,
    classifySingle,
    state.headers,
    state.deadline,
    ctx,
    true,
  );
  if (result.kind === 'abandoned')
    return { kind: 'timeout', attempts: state.attempts, credits: state.credits };
  const response = result.response;
  if (result.verdict.kind === 'retry') return undefined;
  if (response.kind !== 'answer' && response.kind !== 'stream') return undefined;
  return {
    kind: 'answer',
    status: response.status,
    contentType: response.contentType,
    body: response.kind === 'stream' ? response.stream : response.body,
    node: node.name,
    attempts: state.attempts,
    credits: state.credits,
  };
}

/** One walk over the ranked table. Returns a result when a node produced a final answer. */
async function runRound(state: RequestRouting, ctx: RouteContext): Promise<Served> {
  state.startRound();
  const now = ctx.clock.now();
  const table = ctx.table();
  state.roundNodes = table.all;
  for (const node of table.ranked) {
    if (state.tried.includes(node)) continue;
    if (!state.failOpen && node.penalty.isActive(now)) {
      node.metrics.skip(SkipReason.penalized);
      state.sawPenalized = true;
      continue;
    }
    const cost = admissibleCost(node, state);
    if (cost < 0) continue;
    if (!node.permits.tryAcquire()) {
      node.metrics.skip(SkipReason.saturated);
      state.firstSaturated ??= node;
      continue;
    }
    const wait = node.takeToken(ctx.clock.now());
    if (wait > 0) {
      node.permits.release();
      node.metrics.skip(SkipReason.rateLimit);
      if (wait < state.minWait) state.minWait = wait;
      continue;
    }
    const served = await dial(node, cost, state, ctx);
    if (served) return served;
  }
  return undefined;
}

async function parkUntil(ms: number, ctx: RouteContext): Promise<void> {
  ctx.metrics.sleepQueue(1);
  try {
    await sleep(ms);
  } finally {
    ctx.metrics.sleepQueue(-1);
  }
}

/** Waits for a permit on the first saturated node, then tries to send there. */
async function waitForPermit(
  node: UpstreamNode,
  state: RequestRouting,
  ctx: RouteContext,
): Promise<Served> {
  ctx.metrics.sleepQueue(1);
  let granted: boolean;
  try {
    granted = await node.permits.waitFor(state.deadline - ctx.clock.now());
  } finally {
    ctx.metrics.sleepQueue(-1);
  }
  if (!granted) return { kind: 'timeout', attempts: state.attempts, credits: state.credits };
  const cost = admissibleCost(node, state);
  if (cost < 0) {
    node.permits.release();
    return undefined;
  }
  const wait = node.takeToken(ctx.clock.now());
  if (wait > 0) {
    node.permits.release();
    node.metrics.skip(SkipReason.rateLimit);
    await parkUntil(Math.min(wait, Math.max(0, state.deadline - ctx.clock.now())), ctx);
    return undefined;
  }
  return dial(node, cost, state, ctx);
}

/** Routes one parsed request to an answer, or says why none came. */
export async function route(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
): Promise<RouteResult> {
  const state = new RequestRouting(request, headers, ctx.clock.now() + ctx.budgetMs);
  for (;;) {
    if (ctx.clock.now() >= state.deadline) break;
    const served = await runRound(state, ctx);
    if (served) return served;
    const remaining = state.deadline - ctx.clock.now();
    if (remaining <= 0) break;
    if (state.minWait !== Infinity) {
      await parkUntil(Math.min(state.minWait, remaining), ctx);
    } else if (state.firstSaturated) {
      const waited = await waitForPermit(state.firstSaturated, state, ctx);
      if (waited) return waited;
    } else if (state.sawPenalized && !state.failOpen) {
      state.failOpen = true;
    } else if (ctx.table().all === state.roundNodes) {
      return { kind: 'exhausted', attempts: state.attempts, credits: state.credits };
    }
  }
  return { kind: 'timeout', attempts: state.attempts, credits: state.credits };
}
