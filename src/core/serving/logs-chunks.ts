/**
 * Running a planned eth_getLogs split (issue 29): the chunks go out a few at a time (never more
 * than the planned node's in-flight cap, at most LOGS_CONCURRENCY), each through the cache (a
 * final chunk is stored and reused) and its own route (routing/logs-chunk-route.ts: the planned
 * node first, then another node that takes the chunk whole). What comes back:
 *
 * - logs: kept, by block range; merged in block order (and, within a chunk, the node's log
 *   order) into one result with the client's id once every block is covered exactly once;
 * - a node's range limit (protocol/logs-limit-errors.ts): the chunk is cut again to what the
 *   node said (its suggested range, the limit it learned, or half) and the queued chunks that
 *   no longer fit the planned node are cut too; the chunks already answered are not repeated;
 * - no node could take it whole: cut for the best node left whose limit is smaller;
 * - any other error: the request's answer (relayed with the client's id), the rest called off.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import { blockRangeOf } from '../node/logs-limits.js';
import { inFlightCap, type UpstreamNode } from '../node/upstream-node.js';
import { logsLimitOfAnswer, type LogsLimitHint } from '../protocol/logs-limit-errors.js';
import { LOGS_METHOD_ID, chunkBody, type LogsFilter } from '../protocol/logs-range.js';
import { memberValueSpan, spliceSpan, trimmedSpan } from '../protocol/json-spans.js';
import { readIdJson, type RpcRequest } from '../protocol/rpc-request.js';
import { DOOR_REQUEST, nodeBar, passedOver } from '../routing/eligibility.js';
import { routeChunk, takesSpan, type ChunkTarget } from '../routing/logs-chunk-route.js';
import { planOn, splitRange, type LogsPlan } from '../routing/logs-plan.js';
import type { RouteResult } from '../routing/route-context.js';
import { served, type ServeOpen } from './logs-resolve.js';
import type { Router } from './serve-request.js';
import type { ServingContext } from './serving-context.js';

/** Most chunks of one request in flight at once. */
export const LOGS_CONCURRENCY = 4;

/** The blocks a split covers: `from`..`to`, and the client's toBlock (`reach` ≥ `to`). */
export interface SplitEnds {
  readonly from: number;
  readonly to: number;
  readonly reach: number;
}

/** One chunk to send: its blocks, and where it may go. */
interface Chunk {
  readonly from: number;
  readonly to: number;
  readonly preferred: UpstreamNode;
  readonly excluded: readonly UpstreamNode[];
}

/** The logs of an answered chunk: the text inside its result array ('' for none). */
interface Answered {
  readonly from: number;
  readonly to: number;
  readonly text: string;
}

/** The inside of a successful answer's `result` array, or undefined when it is not one. */
function logsOf(result: RouteResult): string | undefined {
  if (result.kind !== 'answer' || !Buffer.isBuffer(result.body)) return undefined;
  if (result.status < 200 || result.status >= 300) return undefined;
  const body = result.body;
  const whole = trimmedSpan(body);
  if (memberValueSpan(body, whole, 'error') !== null) return undefined;
  const span = memberValueSpan(body, whole, 'result');
  if (!span || body[span.start] !== 0x5b) return undefined;
  return body.toString('utf8', span.start + 1, span.end - 1).trim();
}

/** Blocks per query after a limit error on a range of `span` (always fewer than `span`). */
export function smallerSize(span: number, hint: LogsLimitHint, node: UpstreamNode): number {
  const suggested =
    hint.suggested === undefined ? Infinity : hint.suggested[1] - hint.suggested[0] + 1;
  const learned = blockRangeOf(node.config, node.logsLimits) ?? Infinity;
  const size = Math.min(suggested, learned, hint.blockRange ?? Infinity);
  return size >= span ? Math.floor(span / 2) : Math.max(1, size);
}

class ChunkRun {
  readonly queue: Chunk[];
  readonly answered: Answered[] = [];
  fatal: RouteResult | undefined = undefined;
  attempts = 0;
  credits = 0;
  readonly nodes: string[] = [];

  /** The last block the chunks cover: `to`, or `reach` when the last chunk keeps it. */
  readonly end: number;

  constructor(
    readonly logs: LogsFilter,
    readonly plan: LogsPlan,
    { from, to, reach }: SplitEnds,
    readonly headers: ForwardHeaders,
    readonly ctx: ServingContext,
    readonly serveOpen: ServeOpen,
  ) {
    const limit = plan.limit ?? to - from + 1;
    const ranges = splitRange(from, to, limit);
    // The last chunk keeps the client's toBlock past the head when the node takes it whole:
    // a node whose head moved on since answers its newest logs too.
    const [start] = ranges.at(-1)!;
    this.end = reach > to && reach - start + 1 <= limit ? reach : to;
    ranges[ranges.length - 1] = [start, this.end];
    this.queue = ranges.map(([a, b]) => ({ from: a, to: b, preferred: plan.node, excluded: [] }));
  }

  async worker(): Promise<void> {
    for (let chunk = this.queue.shift(); chunk !== undefined; chunk = this.queue.shift()) {
      if (this.fatal !== undefined) return;
      this.settle(chunk, await this.send(chunk));
    }
  }

  send(chunk: Chunk): Promise<RouteResult> {
    const target: ChunkTarget = {
      preferred: chunk.preferred,
      span: chunk.to - chunk.from + 1,
      excluded: chunk.excluded,
    };
    const request: RpcRequest = {
      body: chunkBody(this.logs, chunk.from, chunk.to),
      method: 'eth_getLogs',
      methodId: LOGS_METHOD_ID,
      batch: undefined,
    };
    const router: Router = (req, headers, ctx, onRouted, token) =>
      routeChunk(req, headers, ctx, target, onRouted, token);
    return served(request, this.headers, this.ctx, this.serveOpen, router);
  }

  settle(chunk: Chunk, result: RouteResult): void {
    this.attempts += result.attempts;
    this.credits += result.credits;
    const text = logsOf(result);
    if (text !== undefined) {
      this.answered.push({ from: chunk.from, to: chunk.to, text });
      const node = result.kind === 'answer' ? result.node : '';
      if (!this.nodes.includes(node)) this.nodes.push(node);
      this.ctx.route.metrics.logs?.chunk(node);
      return;
    }
    const hint =
      result.kind === 'answer' && Buffer.isBuffer(result.body)
        ? logsLimitOfAnswer(result.body)
        : undefined;
    if (hint !== undefined && this.recut(chunk, hint)) return;
    if (result.kind === 'exhausted' && this.toSmallerNode(chunk)) return;
    this.fatal ??= result;
  }

  /** Cuts `chunk` again after a limit error; false when it is one block already. */
  recut(chunk: Chunk, hint: LogsLimitHint): boolean {
    const span = chunk.to - chunk.from + 1;
    if (span <= 1) return false;
    const size = smallerSize(span, hint, chunk.preferred);
    const parts = splitRange(chunk.from, chunk.to, size).map(([from, to]) => ({
      ...chunk,
      from,
      to,
    }));
    // Queued chunks the planned node no longer takes whole are cut to its new limit now.
    const limit = blockRangeOf(chunk.preferred.config, chunk.preferred.logsLimits);
    const rest = this.queue.splice(0).flatMap((queued) =>
      limit === undefined ||
      queued.to - queued.from + 1 <= limit ||
      queued.preferred !== chunk.preferred
        ? [queued]
        : splitRange(queued.from, queued.to, limit).map(([from, to]) => ({
            ...queued,
            from,
            to,
          })),
    );
    this.queue.push(...parts, ...rest);
    return true;
  }

  /**
   * No node took `chunk` whole: cut it for the first node (in walk order) whose smaller limit
   * it does not fit, the nodes that could take it whole having had their turn.
   */
  toSmallerNode(chunk: Chunk): boolean {
    const span = chunk.to - chunk.from + 1;
    const table = this.ctx.route.table();
    const now = this.ctx.route.clock.now();
    for (const node of table.ranked) {
      if (chunk.excluded.includes(node) || takesSpan(node, span)) continue;
      if (passedOver(nodeBar(node, DOOR_REQUEST, now, true))) continue;
      const plan = planOn(node, LOGS_METHOD_ID, span);
      if (plan?.limit === undefined) continue;
      const excluded = [...chunk.excluded, ...table.all.filter((n) => takesSpan(n, span))];
      const parts = splitRange(chunk.from, chunk.to, plan.limit).map(([from, to]) => ({
        from,
        to,
        preferred: node,
        excluded,
      }));
      this.queue.unshift(...parts);
      return true;
    }
    return false;
  }

  /** The merged answer, once every block from..to is covered exactly once. */
  merge(request: RpcRequest, from: number, to: number): RouteResult {
    const chunks = [...this.answered].sort((a, b) => a.from - b.from);
    let next = from;
    for (const chunk of chunks) {
      if (chunk.from !== next)
        throw new Error(`eth_getLogs split lost blocks ${next}..${chunk.from - 1}`);
      next = chunk.to + 1;
    }
    if (next !== to + 1) throw new Error(`eth_getLogs split lost blocks ${next}..${to}`);
    const logs = chunks.flatMap((chunk) => (chunk.text === '' ? [] : [chunk.text])).join(',');
    const body = Buffer.from(
      `{"jsonrpc":"2.0","id":${readIdJson(request)},"result":[${logs}]}`,
      'utf8',
    );
    return {
      kind: 'answer',
      status: 200,
      contentType: 'application/json',
      body,
      node: this.nodes.join(','),
      attempts: this.attempts,
      credits: this.credits,
    };
  }
}

/** A chunk's error as the client's answer: its id put back. */
function relabel(
  result: RouteResult,
  request: RpcRequest,
  attempts: number,
  credits: number,
): RouteResult {
  if (result.kind === 'refused') return result;
  const totals = { attempts, credits };
  if (result.kind !== 'answer' || !Buffer.isBuffer(result.body)) return { ...result, ...totals };
  const body = result.body;
  const whole = trimmedSpan(body);
  const idSpan = memberValueSpan(body, whole, 'id');
  const relabelled = idSpan ? spliceSpan(body, whole, idSpan, readIdJson(request)) : body;
  return { ...result, body: relabelled, ...totals };
}

/**
 * Runs `plan` over `ends` for `request` (the client's eth_getLogs): its one answer — the
 * merged logs, or the error that ended it — with every chunk's attempts and credits.
 */
export async function runChunks(
  request: RpcRequest,
  logs: LogsFilter,
  ends: SplitEnds,
  plan: LogsPlan,
  headers: ForwardHeaders,
  ctx: ServingContext,
  serveOpen: ServeOpen,
): Promise<RouteResult> {
  const run = new ChunkRun(logs, plan, ends, headers, ctx, serveOpen);
  const workers = Math.max(
    1,
    Math.min(LOGS_CONCURRENCY, inFlightCap(plan.node.config), run.queue.length),
  );
  await Promise.all(Array.from({ length: workers }, () => run.worker()));
  if (run.fatal !== undefined) return relabel(run.fatal, request, run.attempts, run.credits);
  return run.merge(request, ends.from, run.end);
}
