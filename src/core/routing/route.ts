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
import type { AttemptResponse, ForwardHeaders } from '../node/http-transport.js';
import { UpstreamNode } from '../node/upstream-node.js';
import type { UpstreamStream } from '../node/upstream-stream.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import {
  classifySingle,
  startAttempt,
  type AttemptContext,
  type AnswerClassifier,
  type AttemptFlight,
  type AttemptSink,
} from './attempt.js';
import type { Verdict } from './classify.js';
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

/** Who hears how a routed request ended (the proxy's request object, no closure). */
export interface RouteListener {
  routed(result: RouteResult): void;
  /** Routing threw (a bug): the listener still answers the client. */
  failed(err: unknown): void;
}

/**
 * Per-request routing state; one small object instead of closures. It is also the sink of
 * its attempts, so the common request — one attempt, answered — runs as plain callbacks
 * from the upstream's answer to the client's, with no promise in between.
 */
class RequestRouting implements AttemptSink, AttemptFlight {
  readonly tried: UpstreamNode[] = [];
  failOpen = false;
  attempts = 0;
  credits = 0;
  /** Set by a round: the soonest a rate-limited node has a token (ms), or Infinity. */
  minWait = Infinity;
  firstSaturated: UpstreamNode | undefined = undefined;
  sawPenalized = false;
  /** The round's walk order, and where the walk stands in it. */
  ranked: readonly UpstreamNode[] = [];
  cursor = 0;
  /** When the round started (penalty checks use one reading per round). */
  roundStart = 0;
  /** The latest clock reading: round start, or the end of the last attempt. */
  now = 0;
  /** The node set the round walked (changes identity only on reload). */
  roundNodes: readonly UpstreamNode[] = [];
  /** The price booked by the last admitted node. */
  cost = 0;
  /** The attempt in flight came from waiting on a saturated node: a new round follows it. */
  afterWait = false;
  // The attempt in flight (this state is its flight: one attempt out at a time).
  node: UpstreamNode | undefined = undefined;
  readonly classify: AnswerClassifier = classifySingle;
  sentAt = 0;
  budgetBound = false;
  readonly sink: AttemptSink = this;

  constructor(
    readonly request: RpcRequest,
    readonly headers: ForwardHeaders,
    readonly deadline: number,
    readonly ctx: RouteContext,
    readonly listener: RouteListener,
  ) {}

  startRound(table: RoutingTable, now: number): void {
    this.minWait = Infinity;
    this.firstSaturated = undefined;
    this.sawPenalized = false;
    this.ranked = table.ranked;
    this.roundNodes = table.all;
    this.cursor = 0;
    this.roundStart = now;
    this.now = now;
  }

  attemptDone(
    verdict: Verdict | undefined,
    response: AttemptResponse,
    node: UpstreamNode,
    endedAt: number,
  ): void {
    let answer: RouteResult | undefined;
    try {
      answer = served(verdict, response, node, this);
      if (answer === undefined) {
        this.now = endedAt;
        if (this.afterWait) {
          this.afterWait = false;
          nextRound(this);
        } else {
          walk(this);
        }
        return;
      }
    } catch (err) {
      this.listener.failed(err);
      return;
    }
    this.listener.routed(answer);
  }

  attemptFailed(err: unknown): void {
    this.listener.failed(err);
  }

  timeout(): RouteResult {
    return { kind: 'timeout', attempts: this.attempts, credits: this.credits };
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

/**
 * Continues the round's walk to the next node that admits the request (permit held, token
 * taken, `state.cost` set), or undefined when the round is over.
 */
function admitNext(state: RequestRouting): UpstreamNode | undefined {
  const ranked = state.ranked;
  while (state.cursor < ranked.length) {
    const node = ranked[state.cursor++]!;
    if (node.retired || state.tried.includes(node)) continue;
    if (!state.failOpen && node.penalty.isActive(state.roundStart)) {
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
    const wait = node.takeToken(state.now);
    if (wait > 0) {
      node.permits.release();
      node.metrics.skip(SkipReason.rateLimit);
      if (wait < state.minWait) state.minWait = wait;
      continue;
    }
    state.cost = cost;
    return node;
  }
  return undefined;
}

/** Books the admitted node's price and sends; the result comes back to `state.attemptDone`. */
function dial(node: UpstreamNode, state: RequestRouting): void {
  node.usage.add(state.cost);
  state.credits += state.cost;
  state.attempts++;
  state.tried.push(node);
  state.node = node;
  state.sentAt = state.now;
  startAttempt(state, state.request.body, state.headers, true);
}

/** What an attempt means for the request: its answer, a timeout, or undefined (go on). */
function served(
  verdict: Verdict | undefined,
  response: AttemptResponse,
  node: UpstreamNode,
  state: RequestRouting,
): Served {
  if (verdict === undefined) return state.timeout();
  if (verdict.kind === 'retry') return undefined;
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

type Served = RouteResult | undefined;

/** Dials the round's next admissible node, or ends the round when none is left. */
function walk(state: RequestRouting): void {
  const node = admitNext(state);
  if (node !== undefined) {
    dial(node, state);
    return;
  }
  endRound(state, state.ctx).then(
    (next) => afterRound(state, next),
    (err: unknown) => state.listener.failed(err),
  );
}

/** Starts a round on the current table, unless the budget is spent. */
function nextRound(state: RequestRouting): void {
  const ctx = state.ctx;
  const now = ctx.clock.now();
  if (now >= state.deadline) {
    state.listener.routed(state.timeout());
    return;
  }
  state.startRound(ctx.table(), now);
  walk(state);
}

function afterRound(state: RequestRouting, next: RoundEnd): void {
  if (!(next === 'again' || next instanceof UpstreamNode)) {
    state.listener.routed(next);
    return;
  }
  try {
    if (next === 'again') {
      nextRound(state);
    } else {
      state.afterWait = true;
      dial(next, state);
    }
  } catch (err) {
    state.listener.failed(err);
  }
}

async function parkUntil(ms: number, ctx: RouteContext): Promise<void> {
  ctx.metrics.sleepQueue(1);
  try {
    await sleep(ms);
  } finally {
    ctx.metrics.sleepQueue(-1);
  }
}

/**
 * Waits for a permit on the first saturated node and takes a token there: the node, admitted
 * (to dial), or what to do instead.
 */
async function waitForPermit(
  node: UpstreamNode,
  state: RequestRouting,
  ctx: RouteContext,
): Promise<RoundEnd> {
  ctx.metrics.sleepQueue(1);
  let granted: boolean;
  try {
    granted = await node.permits.waitFor(state.deadline - ctx.clock.now());
  } finally {
    ctx.metrics.sleepQueue(-1);
  }
  if (!granted) return state.timeout();
  state.now = ctx.clock.now();
  if (state.now >= state.deadline) {
    // Granted as the budget ran out: an attempt now could only be booked, never answered.
    node.permits.release();
    return state.timeout();
  }
  if (node.retired) {
    // A reload removed the node while we waited: never book or dial its closed pool.
    node.permits.release();
    return 'again';
  }
  const cost = admissibleCost(node, state);
  if (cost < 0) {
    node.permits.release();
    return 'again';
  }
  const wait = node.takeToken(state.now);
  if (wait > 0) {
    node.permits.release();
    node.metrics.skip(SkipReason.rateLimit);
    await parkUntil(Math.min(wait, Math.max(0, state.deadline - ctx.clock.now())), ctx);
    return 'again';
  }
  state.cost = cost;
  return node;
}

/** How a round that served nothing ends: an answer, a new round, or a node to dial now. */
type RoundEnd = RouteResult | 'again' | UpstreamNode;

/** After a round that served nothing: wait, fail open, walk again, or give up. */
async function endRound(state: RequestRouting, ctx: RouteContext): Promise<RoundEnd> {
  const remaining = state.deadline - ctx.clock.now();
  if (remaining <= 0) return state.timeout();
  if (state.minWait !== Infinity) {
    await parkUntil(Math.min(state.minWait, remaining), ctx);
  } else if (state.firstSaturated) {
    return waitForPermit(state.firstSaturated, state, ctx);
  } else if (state.sawPenalized && !state.failOpen) {
    state.failOpen = true;
  } else if (ctx.table().all === state.roundNodes) {
    return { kind: 'exhausted', attempts: state.attempts, credits: state.credits };
  }
  // (otherwise a reload published new nodes while the round walked the old set: walk again)
  return 'again';
}

/**
 * Routes one parsed request; `listener` hears the answer, or why none came. Exceptions from
 * routing reach `listener.failed`, never the caller's caller.
 */
export function route(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
  listener: RouteListener,
): void {
  const now = ctx.clock.now();
  const state = new RequestRouting(request, headers, now + ctx.budgetMs, ctx, listener);
  state.startRound(ctx.table(), now);
  walk(state);
}
