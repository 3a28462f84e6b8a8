/**
 * One chunk of a split eth_getLogs (issue 29), routed like any request — the same admission
 * (the node's permits, token bucket, quota, penalty, lag), the same classification, retries
 * and held errors — with two differences: the node the split was planned for is walked first,
 * and a node whose range limit is smaller than the chunk is never offered it (it would only
 * refuse). A chunk that fails on one node fails over to another that fits, on its own: the
 * other chunks are not touched.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import { blockRangeOf } from '../node/logs-limits.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import type { RpcRequest } from '../protocol/rpc-request.js';
import { AdmissionRound } from './admission.js';
import { COST_POLICY } from './policy-table.js';
import { RequestRoute, startRoute } from './request-route.js';
import type { RouteCallback, RouteContext } from './route-context.js';
import type { RoutingTable } from './routing-table.js';

/** Where a chunk may go. */
export interface ChunkTarget {
  /** The node the split was planned for: walked first. */
  readonly preferred: UpstreamNode;
  /** Blocks in the chunk: nodes that take fewer are passed over. */
  readonly span: number;
  /** Nodes this chunk (or the range it was cut from) already failed on. */
  readonly excluded: readonly UpstreamNode[];
}

/** Whether `node` takes `span` blocks in one query (as far as configured and learned). */
export function takesSpan(node: UpstreamNode, span: number): boolean {
  const limit = blockRangeOf(node.config, node.logsLimits);
  return limit === undefined || limit >= span;
}

/** A chunk's route (a rare path: its `super()` call costs a generic construct). */
class ChunkRoute<T> extends RequestRoute {
  constructor(
    request: RpcRequest,
    headers: ForwardHeaders,
    ctx: RouteContext,
    now: number,
    readonly target: ChunkTarget,
    onRouted: RouteCallback<T>,
    token: T,
    allowStream: boolean,
  ) {
    const policy = ctx.policies?.().of(request.methodId) ?? COST_POLICY;
    super(
      request,
      headers,
      ctx,
      now,
      policy,
      allowStream,
      onRouted as RouteCallback<unknown>,
      token,
    );
    this.newRound(now);
  }

  /** A round over the table now in force: the planned node first, the unfit ones tried. */
  override newRound(now: number): void {
    const table = this.ctx.table();
    const order = this.policy.byLatency ? table.byLatency : table.ranked;
    const { preferred, span, excluded } = this.target;
    for (const node of table.all) {
      if (!this.tried.includes(node) && (excluded.includes(node) || !takesSpan(node, span))) {
        this.tried.push(node);
      }
    }
    const first = table.all.includes(preferred) ? [preferred] : [];
    const ranked = [...first, ...order.filter((node) => node !== preferred)];
    const view: RoutingTable = { all: table.all, ranked, byLatency: ranked, chain: table.chain };
    this.round = new AdmissionRound(view, now, this.failOpen, false);
  }
}

/**
 * Routes one chunk (`request`, a concrete range) towards `target`; `onRouted(result, token)`
 * hears how it ended, exactly once. A chunk's answer arrives whole (it is merged, never
 * streamed); a client's unsplit request routed past the nodes that would refuse it
 * (`allowStream`) may be streamed, as by the usual route.
 */
export function routeChunk<T>(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
  target: ChunkTarget,
  onRouted: RouteCallback<T>,
  token: T,
  allowStream = false,
): void {
  const now = ctx.clock.now();
  const state = new ChunkRoute(request, headers, ctx, now, target, onRouted, token, allowStream);
  startRoute(state, request.body, headers, allowStream, now);
}
