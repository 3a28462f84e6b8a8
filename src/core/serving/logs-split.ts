/**
 * eth_getLogs through the serving layer (issue 29; README "eth_getLogs: ranges that fit every
 * provider"). Every door's getLogs comes here — an HTTP request, a WebSocket request, and (via
 * logs-batch.ts) a batch element — and leaves one of three ways:
 *
 * - unsplit (the common case): no node and no operator limit is known, the filter names a
 *   `blockHash` or `pending`, or the range fits the node the request goes to. The client's
 *   bytes go on through the cache and routing as for any method. Should every node that could
 *   take it answer with a range limit, the limit is learned (routing/attempt.ts) and the
 *   request is split once with what the node said, instead of relaying the error. When some
 *   node is known to refuse the range, it goes from the planned node over those that take it
 *   whole (routing/logs-chunk-route.ts), never to one that would refuse it;
 * - refused, before any node is asked: bigger than the operator's `max_logs_block_range`, or a
 *   split that fits no node's quota or the key's budget (priced whole, up front);
 * - split (logs-chunks.ts): the range — `latest`/`safe`/`finalized` resolved to a block first
 *   (logs-resolve.ts), and only up to the chain's head — cut into chunks that fit the node the
 *   plan chose, answered as one.
 */
import { blockRangeOf } from '../node/logs-limits.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import {
  planOverBudget,
  planOverQuota,
  logsHugeRangeRefused,
  logsRangeRefused,
  type PlanFacts,
} from '../keys/heavy-read-refusal.js';
import type { KeyRefusal } from '../keys/key-refusal.js';
import { logsLimitOfAnswer, type LogsLimitHint } from '../protocol/logs-limit-errors.js';
import {
  LOGS_METHOD_ID,
  reachesHugeBlock,
  readLogsFilter,
  type LogsFilter,
} from '../protocol/logs-range.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { routeChunk, takesSpan, type ChunkTarget } from '../routing/logs-chunk-route.js';
import { NO_ID, requestIdOf, type RpcRequest } from '../protocol/rpc-request.js';
import {
  chunkCount,
  creditsLeft,
  planLogs,
  type LogsPlan,
  type PlanOutcome,
} from '../routing/logs-plan.js';
import type { RouteCallback, RouteResult } from '../routing/route-context.js';
import type { CallBudget } from './key-gate.js';
import { runChunks, smallerSize } from './logs-chunks.js';
import { chainHead, reachedBlock, resolveRange, type ServeOpen } from './logs-resolve.js';
import type { Router } from './serve-request.js';
import type { ServingContext } from './serving-context.js';

export type { ServeOpen } from './logs-resolve.js';
export { LOGS_METHOD_ID } from '../protocol/logs-range.js';

/** Error answers bigger than this are not read for a range limit (they are not one). */
const LIMIT_ANSWER_BYTES = 16 * 1024;
const ERROR_MEMBER = Buffer.from('"error"', 'latin1');

/** Whether any eth_getLogs range limit is known (the operator's, or any node's). */
export function logsLimited(ctx: ServingContext): boolean {
  if (ctx.route.logs?.maxBlockRange !== undefined) return true;
  for (const node of ctx.route.table().all) {
    if (blockRangeOf(node.config, node.logsLimits) !== undefined) return true;
  }
  return false;
}

/** Route it as it came. */
const UNSPLIT: unique symbol = Symbol('unsplit');

function refused(refusal: KeyRefusal): RouteResult {
  return { kind: 'refused', refusal, attempts: 0, credits: 0 };
}

/** `result` with what else the request cost added (a routed eth_blockNumber, a refused try). */
function plus(result: RouteResult, attempts: number, credits: number): RouteResult {
  if (result.kind === 'refused' || (attempts === 0 && credits === 0)) return result;
  return { ...result, attempts: result.attempts + attempts, credits: result.credits + credits };
}

/** The range limit an answer states (an error, small, readable), or undefined. */
function limitOf(result: RouteResult): LogsLimitHint | undefined {
  if (result.kind !== 'answer' || !Buffer.isBuffer(result.body)) return undefined;
  const body = result.body;
  if (body.length > LIMIT_ANSWER_BYTES || body.indexOf(ERROR_MEMBER) === -1) return undefined;
  return logsLimitOfAnswer(body);
}

function factsOf(plan: LogsPlan, span: number): PlanFacts {
  return { span, chunks: plan.chunks, limit: plan.limit, cost: plan.cost, node: plan.node.name };
}

/** One client eth_getLogs on its way: resolve, check, plan, then split or let it through. */
class LogsCall<T> {
  attempts = 0;
  credits = 0;
  /** Split once after a limit error; never twice. */
  retried = false;
  /** How it goes unsplit: undefined, the usual walk; else past nodes that would refuse it. */
  router: Router | undefined = undefined;

  constructor(
    readonly request: RpcRequest,
    readonly headers: ForwardHeaders,
    readonly ctx: ServingContext,
    readonly onRouted: RouteCallback<T>,
    readonly token: T,
    readonly budget: CallBudget | undefined,
    readonly serveOpen: ServeOpen,
  ) {}

  finish(result: RouteResult): void {
    this.onRouted(plus(result, this.attempts, this.credits), this.token);
  }

  /** As the client wrote it, through the cache and routing (by `router` when set). */
  unsplit(): void {
    const call = this as LogsCall<unknown>;
    this.serveOpen(this.request, this.headers, this.ctx, afterUnsplit, call, this.router);
  }

  /** Plans (with `hint`, after a limit error) and splits, refuses, or lets it through. */
  split(hint?: LogsLimitHint, unsplit?: RouteResult): void {
    const logs = readLogsFilter(this.request.body);
    if (logs === undefined) return unsplit === undefined ? this.unsplit() : this.finish(unsplit);
    this.plan(logs, hint).then(
      (result) => {
        if (result !== UNSPLIT) return this.finish(result);
        if (unsplit === undefined) return this.unsplit();
        this.finish(unsplit);
      },
      (err: unknown) => this.finish({ kind: 'failed', error: err, attempts: 0, credits: 0 }),
    );
  }

  async plan(
    logs: LogsFilter,
    hint: LogsLimitHint | undefined,
  ): Promise<RouteResult | typeof UNSPLIT> {
    const max = this.ctx.route.logs?.maxBlockRange;
    if (max !== undefined && reachesHugeBlock(logs)) {
      return refused(logsHugeRangeRefused(String(logs.filter.toBlock), max));
    }
    const range = await resolveRange(logs, this.headers, this.ctx, this.serveOpen, this);
    if (range === undefined || range[1] <= range[0]) return UNSPLIT;
    const [from, to] = range;
    const span = to - from + 1;
    if (max !== undefined && span > max) return refused(logsRangeRefused(span, max));
    const whole = this.choose(span);
    if (whole === undefined) return UNSPLIT;
    // Fits one query as far as anyone knows: as the client wrote it.
    if (whole.plan.chunks === 1 && hint === undefined) return this.whole(whole.plan, span);
    const end = await this.end(logs, from, to);
    if (end === undefined) return UNSPLIT;
    // Only the blocks up to the head are planned, priced and reserved.
    const outcome = end === to ? whole : this.choose(end - from + 1);
    if (outcome === undefined) return UNSPLIT;
    const blocks = end - from + 1;
    let plan = outcome.plan;
    if (plan.chunks === 1) {
      if (hint === undefined && takesSpan(plan.node, span)) return this.whole(plan, span);
      // After a limit error, cut it as the node said.
      const limit = hint === undefined ? plan.limit : smallerSize(blocks, hint, plan.node);
      const chunks = chunkCount(blocks, limit);
      plan = { ...plan, limit, chunks, cost: chunks * plan.price };
    }
    const left = creditsLeft(plan.node);
    if (plan.cost > left.left) return refused(planOverQuota(factsOf(plan, blocks), left));
    const budget = this.budget;
    if (budget !== undefined && !budget.reserveUpTo(plan.cost + this.credits)) {
      const key = budget.key;
      const total = key.budget ?? 0;
      // What is left to this call: its own reservation is part of the key's `used`.
      const left = total - (key.used - budget.reserved);
      return refused(planOverBudget(factsOf(plan, blocks), key.name, left, total));
    }
    this.ctx.route.metrics.logs?.split();
    const ends = { from, to: end, reach: to };
    return runChunks(this.request, logs, ends, plan, this.headers, this.ctx, this.serveOpen);
  }

  /** The walk order of eth_getLogs. */
  order(): readonly UpstreamNode[] {
    const route = this.ctx.route;
    const table = route.table();
    const byLatency = route.policies?.().of(LOGS_METHOD_ID).byLatency === true;
    return byLatency ? table.byLatency : table.ranked;
  }

  /** The plan for `span` blocks (or the first over-quota one), undefined when no node may take it. */
  choose(span: number): Exclude<PlanOutcome, { kind: 'no_node' }> | undefined {
    const outcome = planLogs(this.order(), LOGS_METHOD_ID, span, this.ctx.route.clock.now());
    return outcome.kind === 'no_node' ? undefined : outcome;
  }

  /**
   * Unsplit, as the client wrote it: by the usual walk, or — when some node is known to refuse
   * `span` blocks — from the planned node over the nodes that take it whole, never those.
   */
  whole(plan: LogsPlan, span: number): typeof UNSPLIT {
    if (this.ctx.route.table().all.every((node) => takesSpan(node, span))) return UNSPLIT;
    const target: ChunkTarget = { preferred: plan.node, span, excluded: [] };
    this.router = (request, headers, ctx, onRouted, token) =>
      routeChunk(request, headers, ctx, target, onRouted, token, true);
    return UNSPLIT;
  }

  /**
   * Where a split of `from`..`to` ends: `to`, or the chain's head when `to` is past it (the
   * blocks past it are no node's yet: a query of them only errors); undefined when it should
   * not be split at all — `from` is past the head, or the range has no end a chain can reach.
   * A range at or below a block some node has reached needs no head; past it, the head is
   * chain state's when fresh, else one routed eth_blockNumber. While no node's head was ever
   * seen (a cold start) nothing is asked: the range is planned as written.
   */
  async end(logs: LogsFilter, from: number, to: number): Promise<number | undefined> {
    // `latest`, `safe` and `finalized` are at or below the head already.
    if (logs.to < 0) return to;
    const reached = reachedBlock(this.ctx);
    if (to <= reached) return to;
    const head =
      reached >= 0 ? await chainHead(this.headers, this.ctx, this.serveOpen, this) : undefined;
    if (head === undefined || head >= to) return Number.isSafeInteger(to) ? to : undefined;
    return from > head ? undefined : head;
  }
}

/** Where an unsplit eth_getLogs ends: its answer, or — a range limit — one split after all. */
function afterUnsplit(result: RouteResult, call: LogsCall<unknown>): void {
  const hint = call.retried ? undefined : limitOf(result);
  if (hint === undefined) return call.finish(result);
  call.retried = true;
  call.attempts += result.attempts;
  call.credits += result.credits;
  call.split(hint, { ...result, attempts: 0, credits: 0 });
}

/**
 * Serves one eth_getLogs (`onRouted` hears how it ended, exactly once); `budget` is its key's,
 * when it has one. `serveOpen` is the serving layer's own path past the key check.
 */
export function serveLogs<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: ServingContext,
  onRouted: RouteCallback<T>,
  token: T,
  budget: CallBudget | undefined,
  serveOpen: ServeOpen,
): void {
  // A notification expects nothing back: there is no answer to assemble.
  if (requestIdOf(request) === NO_ID) return serveOpen(request, headers, ctx, onRouted, token);
  const call = new LogsCall(request, headers, ctx, onRouted, token, budget, serveOpen);
  if (logsLimited(ctx)) call.split();
  else call.unsplit();
}
