/**
 * Where a subscription goes, and when it must leave: the one eligibility rule of every door
 * (routing/eligibility.ts), walked in the same ranked order as a request — tier, then measured
 * latency — through the same node state:
 *
 *   retired by a reload, cordoned, or excluded (it just failed here) → pass over
 *   its price list has no [websocket] table                         → skip: method_unsupported
 *   penalized, by HTTP traffic or a failed socket (unless failing open) → skip: penalized
 *   usage past the spillover threshold                              → skip: quota_exhausted
 *   a rate token (a subscribe call counts against rps_limit)        → skip: rate_limit
 *
 *   known to be behind (chain/chain-state.ts `lagging`) → taken only when no fresh node of
 *                                                      its tier can be: lag never spills a tier
 *
 * No concurrency permit is taken (the subscription door's limits): a subscription holds no
 * HTTP connection. The subscribe price is booked by the caller when it sends the call.
 */
import { SkipReason } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import {
  BAR_CLOSED_DOOR,
  BAR_CORDONED,
  BAR_NONE,
  BAR_OVER_QUOTA,
  BAR_PENALIZED,
  BAR_RETIRED,
  DOOR_SUBSCRIPTION,
  eligibility,
  skipReasonOf,
  HELD_NONE,
  takeLimits,
} from '../routing/eligibility.js';
import type { RoutingTable } from '../routing/routing-table.js';

/** Where a subscription can go now. */
export type Placement =
  | { readonly kind: 'node'; readonly node: UpstreamNode }
  /** Every eligible node is rate-limited: the soonest token comes in `ms`. */
  | { readonly kind: 'wait'; readonly ms: number }
  /** No node can take it. */
  | { readonly kind: 'none' };

/** Why a subscription leaves its node (label `reason` of cascade_ws_failovers_total). */
export type LeaveReason = 'removed' | 'cordoned' | 'penalized' | 'over_quota';

/** The price of a subscribe call on `node` (0 when it has no [websocket] table). */
function subscribePrice(node: UpstreamNode): number {
  return node.config.pricing.websocket?.subscribe ?? 0;
}

/** Picks a node for a subscription now (taking its rate token), or says why none. */
export function placeSubscription(
  table: RoutingTable,
  now: number,
  excluded: readonly UpstreamNode[],
  isSocketPenalized: (node: UpstreamNode, now: number) => boolean,
  /** When every node is penalized, use one anyway (false: a voluntary move waits instead). */
  mayFailOpen = true,
): Placement {
  let minWait = Infinity;
  let sawPenalized = false;
  const chain = table.chain;
  const judge = chain !== undefined && chain.active;
  for (const failOpen of [false, true]) {
    if (failOpen && (!mayFailOpen || !sawPenalized || minWait !== Infinity)) break;
    // The first eligible node known to be behind: used only if its tier has no fresh one.
    let behind: UpstreamNode | undefined;
    for (const node of table.ranked) {
      if (behind !== undefined && node.config.tier !== behind.config.tier) break;
      if (excluded.includes(node)) continue;
      const penalizedOnDoor = !failOpen && isSocketPenalized(node, now);
      const bar = eligibility(
        node,
        DOOR_SUBSCRIPTION,
        now,
        failOpen,
        subscribePrice(node),
        penalizedOnDoor,
      );
      if (bar !== BAR_NONE) {
        const skip = skipReasonOf(bar);
        if (skip !== -1) node.metrics.skip(skip);
        if (bar === BAR_PENALIZED) sawPenalized = true;
        continue;
      }
      if (judge && behind === undefined && chain.lagging(node.heads, now)) {
        behind = node;
        continue;
      }
      const wait = takeLimits(node, now, DOOR_SUBSCRIPTION, HELD_NONE);
      if (wait > 0) {
        node.metrics.skip(SkipReason.rateLimit);
        if (wait < minWait) minWait = wait;
        continue;
      }
      return { kind: 'node', node };
    }
    if (behind !== undefined) {
      const wait = takeLimits(behind, now, DOOR_SUBSCRIPTION, HELD_NONE);
      if (wait === 0) return { kind: 'node', node: behind };
      behind.metrics.skip(SkipReason.rateLimit);
      if (wait < minWait) minWait = wait;
    }
  }
  return minWait === Infinity ? { kind: 'none' } : { kind: 'wait', ms: minWait };
}

/**
 * Why an active subscription must leave its node now, or undefined when it may stay: the node
 * would not take it now (never failing open: a move is voluntary, the old socket still works).
 */
export function reasonToLeave(node: UpstreamNode, now: number): LeaveReason | undefined {
  switch (eligibility(node, DOOR_SUBSCRIPTION, now, false, subscribePrice(node))) {
    case BAR_RETIRED:
    case BAR_CLOSED_DOOR:
      return 'removed';
    case BAR_CORDONED:
      return 'cordoned';
    case BAR_PENALIZED:
      return 'penalized';
    case BAR_OVER_QUOTA:
      return 'over_quota';
    default:
      return undefined;
  }
}
