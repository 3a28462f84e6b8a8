/**
 * The one eligibility rule: whether a node may take new work now, and if not, why. Every door
 * asks it — admission of a request or a batch element (admission.ts), placement of a WebSocket
 * subscription and the decision that one must leave its node (ws/ws-admission.ts) — so a rule
 * added here (a cordon, a penalty, a quota) holds for all of them at once.
 *
 * The checks, in the order they apply (the first that fails is the answer):
 *
 *   1. the node   retired by a reload                      → retired       (passed over)
 *                 cordoned by an operator                  → cordoned      (passed over)
 *                 does not serve the door at all (a
 *                 subscription on a node whose price list
 *                 has no [websocket] table)                → closedDoor    (method_unsupported)
 *                 penalized, unless the work fails open    → penalized     (penalized)
 *   2. the work   no price for its method                  → unpriced      (method_unsupported)
 *                 usage past the spillover threshold       → overQuota     (quota_exhausted)
 *   3. the limits a concurrency permit (requests only)     → saturated     (saturated)
 *                 a rate token                             → rate limited  (rate_limit)
 *
 * Stage 1 is about the node and stage 2 about one piece of work, because a batch asks stage 2
 * once per element it offers a node (and stage 1 once per node). The price and quota come
 * before the limits, so a node that cannot or must not serve never spends a permit or a token.
 *
 * The limits are the only legitimate difference between doors: a request holds an HTTP
 * connection (a permit) while a subscription does not, so `Door` is a parameter of the limit
 * stage, not a second copy of the rule. Results are small integers: the request path calls this
 * for every node it walks and allocates nothing here.
 */
import { UNPRICED } from '../config/types.js';
import { SkipReason } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';

/** Why a node may not take new work now; `none` when it may. */
export const Bar = {
  none: 0,
  retired: 1,
  cordoned: 2,
  closedDoor: 3,
  penalized: 4,
  unpriced: 5,
  overQuota: 6,
} as const;
export type Bar = (typeof Bar)[keyof typeof Bar];

/** Where the work comes from: its door decides which limits it takes. */
export const Door = {
  /** An HTTP or WebSocket request, or a batch element: a permit and a rate token. */
  request: 0,
  /** A WebSocket subscribe call: a rate token, no permit (it holds no HTTP connection). */
  subscription: 1,
} as const;
export type Door = (typeof Door)[keyof typeof Door];

/** `takeLimits`: the node had no concurrency permit free. */
export const SATURATED = -1;

/** Whether the node serves `door` at all (static: its config, not its state now). */
export function servesDoor(node: UpstreamNode, door: Door): boolean {
  return door === Door.request || node.config.pricing.websocket !== undefined;
}

/**
 * Stage 1, the node: retired, cordoned, the door, the penalty. The penalty is judged at
 * `penaltyAt` (admission judges a whole round at its start) and ignored when `failOpen` (every
 * node was skipped for a penalty, so the work walks them anyway). `penalizedOnDoor`: the door
 * holds a penalty of its own against the node (a WebSocket that just dropped or stalled).
 */
export function nodeBar(
  node: UpstreamNode,
  door: Door,
  penaltyAt: number,
  failOpen: boolean,
  penalizedOnDoor = false,
): Bar {
  if (node.retired) return Bar.retired;
  if (node.cordoned) return Bar.cordoned;
  if (!servesDoor(node, door)) return Bar.closedDoor;
  if (!failOpen && (penalizedOnDoor || node.penalty.isActive(penaltyAt))) return Bar.penalized;
  return Bar.none;
}

/** Stage 2, one piece of work priced `cost` (UNPRICED: the node has no price for it). */
export function workBar(node: UpstreamNode, cost: number): Bar {
  if (cost === UNPRICED) return Bar.unpriced;
  if (node.usage.used > node.config.spilloverThreshold) return Bar.overQuota;
  return Bar.none;
}

/** Stages 1 and 2 for one piece of work: why `node` may not take it now, or `none`. */
export function eligibility(
  node: UpstreamNode,
  door: Door,
  now: number,
  failOpen: boolean,
  cost: number,
  penalizedOnDoor = false,
): Bar {
  const bar = nodeBar(node, door, now, failOpen, penalizedOnDoor);
  return bar === Bar.none ? workBar(node, cost) : bar;
}

/** Bars a walk passes over without counting a skip: the node is simply not in rotation. */
export function passedOver(bar: Bar): boolean {
  return bar === Bar.retired || bar === Bar.cordoned;
}

/** The skip metric (rpc_node_skipped_total reason) a bar counts; -1: none, it is passed over. */
export function skipReasonOf(bar: Bar): number {
  switch (bar) {
    case Bar.closedDoor:
    case Bar.unpriced:
      return SkipReason.methodUnsupported;
    case Bar.penalized:
      return SkipReason.penalized;
    case Bar.overQuota:
      return SkipReason.quotaExhausted;
    default:
      return -1;
  }
}

/**
 * Stage 3, the limits of `door`, taken for one piece of work the node passed stages 1 and 2
 * for: a concurrency permit (requests, unless `permitHeld`: the attempt already has one), then
 * a rate token. Returns 0 when taken; SATURATED when no permit was free; else the ms until the
 * next token (a permit taken for this work is given back). Counts the node's demand, which the
 * split of limits between workers reads.
 */
export function takeLimits(
  node: UpstreamNode,
  now: number,
  door: Door,
  permitHeld: boolean,
): number {
  const takesPermit = door === Door.request && !permitHeld;
  if (takesPermit && !node.permits.tryAcquire()) {
    node.crowded++;
    return SATURATED;
  }
  node.wanted++;
  const wait = node.takeToken(now);
  if (wait > 0 && takesPermit) node.permits.release();
  return wait;
}
