/**
 * The one eligibility rule: whether a node may take new work now, and if not, why. Every door
 * asks it — admission of a request or a batch element (admission.ts), placement of a WebSocket
 * subscription and the decision that one must leave its node (ws/ws-admission.ts) — so a rule
 * added here (a cordon, a penalty, a quota) holds for all of them at once.
 *
 * The checks, in the order they apply (the first that fails is the answer):
 *
 *   1. the node   retired by a reload                      → BAR_RETIRED     (passed over)
 *                 cordoned by an operator                  → BAR_CORDONED    (passed over)
 *                 on another chain, or not yet checked
 *                 ([server] expect_chain)                  → BAR_WRONG_CHAIN (passed over)
 *                 does not serve the door at all (a
 *                 subscription on a node whose price list
 *                 has no [websocket] table)                → BAR_CLOSED_DOOR (method_unsupported)
 *                 penalized, unless the work fails open    → BAR_PENALIZED   (penalized)
 *   2. the work   no price for its method                  → BAR_UNPRICED    (method_unsupported)
 *                 usage past the spillover threshold, the
 *                 node's or its provider account's         → BAR_OVER_QUOTA  (quota_exhausted)
 *   3. the limits a concurrency permit (requests only),
 *                 the node's, then its account's           → SATURATED / ACCOUNT_SATURATED (saturated)
 *                 a rate token, the node's and its
 *                 account's (both or neither is spent)     → ms to wait      (rate_limit)
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

/*
 * Why a node may not take new work now (BAR_NONE: it may). Plain exported numbers rather than
 * an object of them: the request path compares against them for every node it walks, and V8
 * folds an imported `const` number into the code while an object's property stays a load.
 */
/** It may. */
export const BAR_NONE = 0;
/** Removed by a reload. */
export const BAR_RETIRED = 1;
/** Cordoned by an operator. */
export const BAR_CORDONED = 2;
/** It does not serve the door at all (a subscription, no [websocket] table). */
export const BAR_CLOSED_DOOR = 3;
/** Penalized, and the work does not fail open. */
export const BAR_PENALIZED = 4;
/** No price for the work's method. */
export const BAR_UNPRICED = 5;
/** Usage past the spillover threshold. */
export const BAR_OVER_QUOTA = 6;
/** On another chain than `[server] expect_chain`, or not checked yet. */
export const BAR_WRONG_CHAIN = 7;
export type Bar =
  | typeof BAR_NONE
  | typeof BAR_RETIRED
  | typeof BAR_CORDONED
  | typeof BAR_CLOSED_DOOR
  | typeof BAR_PENALIZED
  | typeof BAR_UNPRICED
  | typeof BAR_OVER_QUOTA
  | typeof BAR_WRONG_CHAIN;

// Where the work comes from: its door decides which limits it takes.
/** An HTTP or WebSocket request, or a batch element: a permit and a rate token. */
export const DOOR_REQUEST = 0;
/** A WebSocket subscribe call: a rate token, no permit (it holds no HTTP connection). */
export const DOOR_SUBSCRIPTION = 1;
export type Door = typeof DOOR_REQUEST | typeof DOOR_SUBSCRIPTION;

/** `takeLimits`: the node had no concurrency permit free. */
export const SATURATED = -1;
/** `takeLimits`: the node's provider account had no concurrency permit free. */
export const ACCOUNT_SATURATED = -2;

// Which permits the caller of `takeLimits` already holds (after waiting for one): bits.
/** None: take both. */
export const HELD_NONE = 0;
/** The node's permit. */
export const HELD_NODE = 1;
/** The account's permit. */
export const HELD_ACCOUNT = 2;
/** Both (an attempt that already took a candidate). */
export const HELD_ALL = 3;

/** Whether the node serves `door` at all (static: its config, not its state now). */
export function servesDoor(node: UpstreamNode, door: Door): boolean {
  return door === DOOR_REQUEST || node.config.pricing.websocket !== undefined;
}

/**
 * Stage 1, the node: retired, cordoned, on another chain, the door, the penalty. The penalty is judged at
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
  if (node.retired) return BAR_RETIRED;
  if (node.cordoned) return BAR_CORDONED;
  if (node.heads.wrongChain) return BAR_WRONG_CHAIN;
  if (!servesDoor(node, door)) return BAR_CLOSED_DOOR;
  if (!failOpen && (penalizedOnDoor || node.penalty.isActive(penaltyAt))) return BAR_PENALIZED;
  return BAR_NONE;
}

/** Stage 2, one piece of work priced `cost` (UNPRICED: the node has no price for it). */
export function workBar(node: UpstreamNode, cost: number): Bar {
  if (cost === UNPRICED) return BAR_UNPRICED;
  if (node.usage.used > node.config.spilloverThreshold) return BAR_OVER_QUOTA;
  const account = node.account;
  if (account !== undefined && account.overQuota) return BAR_OVER_QUOTA;
  return BAR_NONE;
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
  return bar === BAR_NONE ? workBar(node, cost) : bar;
}

/** Bars a walk passes over without counting a skip: the node is simply not in rotation. */
export function passedOver(bar: Bar): boolean {
  return bar === BAR_RETIRED || bar === BAR_CORDONED || bar === BAR_WRONG_CHAIN;
}

/** The skip metric (rpc_node_skipped_total reason) a bar counts; -1: none, it is passed over. */
export function skipReasonOf(bar: Bar): number {
  switch (bar) {
    case BAR_CLOSED_DOOR:
    case BAR_UNPRICED:
      return SkipReason.methodUnsupported;
    case BAR_PENALIZED:
      return SkipReason.penalized;
    case BAR_OVER_QUOTA:
      return SkipReason.quotaExhausted;
    default:
      return -1;
  }
}

/**
 * Stage 3, the limits of `door`, taken for one piece of work the node passed stages 1 and 2
 * for: concurrency permits (requests only) — the node's, then its provider account's — less
 * those the caller holds (`held`: HELD_* bits), then a rate token from the node and from its
 * account. Returns 0 when everything was taken; SATURATED or ACCOUNT_SATURATED when a permit
 * was not free; else the ms until the next token. On any refusal what this call took is given
 * back (held permits stay the caller's). Counts demand, which the split of limits between
 * workers and replicas reads.
 */
export function takeLimits(node: UpstreamNode, now: number, door: Door, held: number): number {
  const request = door === DOOR_REQUEST;
  const takesPermit = request && (held & HELD_NODE) === 0;
  if (takesPermit && !node.permits.tryAcquire()) {
    node.crowded++;
    return SATURATED;
  }
  const account = node.account;
  if (account === undefined) {
    node.wanted++;
    const wait = node.takeToken(now);
    if (wait > 0 && takesPermit) node.permits.release();
    return wait;
  }
  const takesAccountPermit = request && (held & HELD_ACCOUNT) === 0;
  if (takesAccountPermit && !account.permits.tryAcquire()) {
    account.crowded++;
    if (takesPermit) node.permits.release();
    return ACCOUNT_SATURATED;
  }
  node.wanted++;
  let wait = node.takeToken(now);
  if (wait === 0) {
    account.wanted++;
    wait = account.takeToken(now);
    // The account refused: the node's token was not spent on anything.
    if (wait > 0) node.giveBackToken();
  }
  if (wait > 0) {
    if (takesPermit) node.permits.release();
    if (takesAccountPermit) account.permits.release();
  }
  return wait;
}

/** Gives back the permits in `held` (HELD_* bits) when the work they were taken for is not sent. */
export function releaseHeld(node: UpstreamNode, held: number): void {
  if ((held & HELD_NODE) !== 0) node.permits.release();
  if ((held & HELD_ACCOUNT) !== 0) node.account?.permits.release();
}
