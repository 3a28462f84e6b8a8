/**
 * Where a subscription goes: the same admission rules as a request (docs/routing.md §2), walked
 * in the same ranked order — tier, then measured latency — through the same node state:
 *
 *   retired by a reload, or excluded (it just failed this subscription) → pass over
 *   penalized, by its HTTP traffic or a failed socket (unless failing open) → skip: penalized
 *   its price list has no [websocket] table                               → skip: method_unsupported
 *   usage past the spillover threshold                                    → skip: quota_exhausted
 *   a rate token (a subscribe call counts against rps_limit)              → skip: rate_limit
 *
 * No concurrency permit is taken: a subscription holds no HTTP connection. The subscribe
 * price is booked by the caller when it sends the call.
 */
import { SkipReason } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import type { RoutingTable } from '../routing/routing-table.js';

/** Where a subscription can go now. */
export type Placement =
  | { readonly kind: 'node'; readonly node: UpstreamNode }
  /** Every eligible node is rate-limited: the soonest token comes in `ms`. */
  | { readonly kind: 'wait'; readonly ms: number }
  /** No node can take it. */
  | { readonly kind: 'none' };

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
  for (const failOpen of [false, true]) {
    if (failOpen && (!mayFailOpen || !sawPenalized || minWait !== Infinity)) break;
    for (const node of table.ranked) {
      if (node.retired || excluded.includes(node)) continue;
      if (node.config.pricing.websocket === undefined) {
        node.metrics.skip(SkipReason.methodUnsupported);
        continue;
      }
      if (!failOpen && (node.penalty.isActive(now) || isSocketPenalized(node, now))) {
        node.metrics.skip(SkipReason.penalized);
        sawPenalized = true;
        continue;
      }
      if (node.usage.used > node.config.spilloverThreshold) {
        node.metrics.skip(SkipReason.quotaExhausted);
        continue;
      }
      const wait = node.takeToken(now);
      if (wait > 0) {
        node.metrics.skip(SkipReason.rateLimit);
        if (wait < minWait) minWait = wait;
        continue;
      }
      return { kind: 'node', node };
    }
  }
  return minWait === Infinity ? { kind: 'none' } : { kind: 'wait', ms: minWait };
}

/** Why an active subscription must leave its node now, or undefined when it may stay. */
export function reasonToLeave(
  node: UpstreamNode,
  now: number,
): 'removed' | 'over_quota' | 'penalized' | undefined {
  if (node.retired) return 'removed';
  if (node.config.pricing.websocket === undefined) return 'removed';
  if (node.usage.used > node.config.spilloverThreshold) return 'over_quota';
  if (node.penalty.isActive(now)) return 'penalized';
  return undefined;
}
