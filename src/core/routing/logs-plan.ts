/**
 * Planning an eth_getLogs split (issue 29), pure: which node the request goes to — the first
 * in its method's walk order that may take it and whose quota fits the whole plan — and how its
 * range is cut for that node. eRPC plans with the smallest limit of all upstreams; cascade cuts
 * for the node it chose, so a node with a wide limit is not sent ten times the requests it needs.
 *
 * A range of `span` blocks on a node that serves `limit` per query becomes ⌈span / limit⌉
 * chunks of nearly equal size (`[from, mid]`, `[mid+1, to]`, … — no block twice, none left
 * out), each priced as one eth_getLogs on that node.
 */
import { priceOf } from '../config/price-list.js';
import { UNPRICED } from '../config/types.js';
import { blockRangeOf } from '../node/logs-limits.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import {
  BAR_NONE,
  BAR_PENALIZED,
  DOOR_REQUEST,
  eligibility,
  passedOver,
  nodeBar,
} from './eligibility.js';

/** One inclusive block range. */
export type BlockRange = readonly [from: number, to: number];

/** What a node would be asked, and what it would cost. */
export interface LogsPlan {
  readonly node: UpstreamNode;
  /** Blocks per chunk on that node (undefined: no limit known, one query). */
  readonly limit: number | undefined;
  readonly chunks: number;
  /** Credits of one chunk on that node. */
  readonly price: number;
  /** Credits of the whole plan. */
  readonly cost: number;
}

/** How planning went. */
export type PlanOutcome =
  | { readonly kind: 'plan'; readonly plan: LogsPlan }
  /** The nodes that could take it cannot fit the plan in their quota; the first one's plan. */
  | { readonly kind: 'over_quota'; readonly plan: LogsPlan }
  /** No node may take an eth_getLogs now (routing answers that as for any request). */
  | { readonly kind: 'no_node' };

/** Chunks a range of `span` blocks needs on a node serving `limit` per query. */
export function chunkCount(span: number, limit: number | undefined): number {
  return limit === undefined || span <= limit ? 1 : Math.ceil(span / limit);
}

/** `from`..`to` cut into chunks of at most `limit` blocks, of nearly equal size, in order. */
export function splitRange(from: number, to: number, limit: number): BlockRange[] {
  const span = to - from + 1;
  const count = chunkCount(span, limit);
  const base = Math.floor(span / count);
  const extra = span % count;
  const ranges: BlockRange[] = [];
  let start = from;
  for (let i = 0; i < count; i++) {
    const size = base + (i < extra ? 1 : 0);
    ranges.push([start, start + size - 1]);
    start += size;
  }
  return ranges;
}

/** The plan of `span` blocks on `node`, or undefined when it does not price eth_getLogs. */
export function planOn(node: UpstreamNode, methodId: number, span: number): LogsPlan | undefined {
  const price = priceOf(node.config.pricing, methodId);
  if (price === UNPRICED) return undefined;
  const limit = blockRangeOf(node.config, node.logsLimits);
  const chunks = chunkCount(span, limit);
  return { node, limit, chunks, price, cost: chunks * price };
}

/** Credits before spillover on `node`: its own, or its account's pool when that has fewer. */
export interface CreditsLeft {
  readonly left: number;
  /** The account whose pool is the tighter one; undefined: the node's own quota. */
  readonly account: string | undefined;
}

/** What `node` may still spend before it (or its provider account) spills over. */
export function creditsLeft(node: UpstreamNode): CreditsLeft {
  const own = node.config.spilloverThreshold - node.usage.used;
  const account = node.account;
  if (account === undefined) return { left: own, account: undefined };
  const pool = account.config.spilloverThreshold - account.usage.used;
  return pool < own ? { left: pool, account: account.name } : { left: own, account: undefined };
}

/** Whether the node's quota and its account's pool (their spillover thresholds) hold the plan. */
function fits(plan: LogsPlan): boolean {
  return plan.cost <= creditsLeft(plan.node).left;
}

/**
 * Chooses the node for a range of `span` blocks among `order` (the method's walk order): the
 * first that may take work now (not retired, cordoned, on another chain or penalized; a
 * penalized one only when no other can) and whose quota holds the plan.
 */
export function planLogs(
  order: readonly UpstreamNode[],
  methodId: number,
  span: number,
  now: number,
): PlanOutcome {
  let overQuota: LogsPlan | undefined;
  for (const failOpen of [false, true]) {
    for (const node of order) {
      const bar = nodeBar(node, DOOR_REQUEST, now, failOpen);
      if (passedOver(bar) || (bar === BAR_PENALIZED && !failOpen)) continue;
      const plan = planOn(node, methodId, span);
      if (plan === undefined) continue;
      const work = eligibility(node, DOOR_REQUEST, now, failOpen, plan.price);
      if (work === BAR_NONE && fits(plan)) return { kind: 'plan', plan };
      overQuota ??= plan;
    }
  }
  return overQuota === undefined ? { kind: 'no_node' } : { kind: 'over_quota', plan: overQuota };
}
