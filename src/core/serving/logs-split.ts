/**
 * eth_getLogs through the serving layer (issue 29; README "eth_getLogs: ranges that fit every
 * provider"). Every door's getLogs comes here — an HTTP request, a WebSocket request, and (via
 * logs-batch.ts) a batch element — and leaves one of three ways:
 *
 * - unsplit (the common case): no node and no operator limit is known, the filter names a
 *   `blockHash` or `pending`, or the range fits the node the request goes to. The client's
 *   bytes go on through the cache and routing as for any method. Should every node that could
 *   take it answer with a range limit, the limit is learned (routing/attempt.ts) and the
 *   request is split once with what the node said, instead of relaying the error;
 * - refused, before any node is asked: bigger than the operator's `max_logs_block_range`, or a
 *   split that fits no node's quota or the key's budget (priced whole, up front);
 * - split (logs-chunks.ts): the range — `latest`/`safe`/`finalized` resolved to a block first
 *   (logs-resolve.ts) — cut into chunks that fit the node the plan chose, answered as one.
 */
import { blockRangeOf } from '../node/logs-limits.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import {
  planOverBudget,
  planOverQuota,
  logsRangeRefused,
  type PlanFacts,
} from '../keys/heavy-read-refusal.js';
import type { KeyRefusal } from '../keys/key-refusal.js';
import { logsLimitOfAnswer, type LogsLimitHint } from '../protocol/logs-limit-errors.js';
import { LOGS_METHOD_ID, readLogsFilter, type LogsFilter } from '../protocol/logs-range.js';
import { NO_ID, requestIdOf, type RpcRequest } from '../protocol/rpc-request.js';
import { chunkCount, creditsLeft, planLogs, type LogsPlan } from '../routing/logs-plan.js';
import type { RouteCallback, RouteResult } from '../routing/route-context.js';
import type { CallBudget } from './key-gate.js';
import { runChunks, smallerSize } from './logs-chunks.js';
import { resolveRange, type ServeOpen } from './logs-resolve.js';
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

  /** As the client wrote it, through the cache and routing. */
  unsplit(): void {
    this.serveOpen(this.request, this.headers, this.ctx, afterUnsplit, this as LogsCall<unknown>);
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
    const range = await resolveRange(logs, this.headers, this.ctx, this.serveOpen, this);
    if (range === undefined || range[1] <= range[0]) return UNSPLIT;
    const [from, to] = range;
    const span = to - from + 1;
    const max = this.ctx.route.logs?.maxBlockRange;
    if (max !== undefined && span > max) return refused(logsRangeRefused(span, max));
    const route = this.ctx.route;
    const table = route.table();
    const byLatency = route.policies?.().of(LOGS_METHOD_ID).byLatency === true;
    const order = byLatency ? table.byLatency : table.ranked;
    const outcome = planLogs(order, LOGS_METHOD_ID, span, route.clock.now());
    if (outcome.kind === 'no_node') return UNSPLIT;
    let plan = outcome.plan;
    if (plan.chunks === 1) {
      // Fits as far as anyone knows; after a limit error, cut it as the node said.
      if (hint === undefined) return UNSPLIT;
      const limit = smallerSize(span, hint, plan.node);
      const chunks = chunkCount(span, limit);
      plan = { ...plan, limit, chunks, cost: chunks * plan.price };
    }
    const left = creditsLeft(plan.node);
    if (plan.cost > left.left) return refused(planOverQuota(factsOf(plan, span), left));
    const budget = this.budget;
    if (budget !== undefined && !budget.reserveUpTo(plan.cost + this.credits)) {
      const key = budget.key;
      const total = key.budget ?? 0;
      // What is left to this call: its own reservation is part of the key's `used`.
      const left = total - (key.used - budget.reserved);
      return refused(planOverBudget(factsOf(plan, span), key.name, left, total));
    }
    route.metrics.logs?.split();
    return runChunks(this.request, logs, from, to, plan, this.headers, this.ctx, this.serveOpen);
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
