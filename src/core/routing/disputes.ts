/**
 * Agreement on unknown errors (docs/routing.md §3): an error nothing is known about is settled
 * by a second opinion. When another node answers the same request with the same code and
 * message, the error is the request's: relayed, and nobody is penalized for it. When another
 * node answers successfully, every node that gave an unknown error was at fault after all.
 */
import type { UpstreamNode } from '../node/upstream-node.js';
import { penalizeNode, type RouteEvents } from './attempt.js';
import type { Verdict } from './classify.js';

const REASON = 'JSON-RPC error that another node did not repeat';

/** The unknown errors one request (or one batch element) got so far. */
export class Disputes {
  #open: Array<{ readonly node: UpstreamNode; readonly key: string | undefined }> | undefined;

  /**
   * Records `node`'s unknown error `key`. True when an earlier node gave the same error: it is
   * the request's; the nodes that said something else are penalized.
   */
  agree(node: UpstreamNode, key: string | undefined, now: number, events: RouteEvents): boolean {
    if (this.#open?.some((dispute) => dispute.key === key)) {
      this.#settle(key, now, events);
      return true;
    }
    (this.#open ??= []).push({ node, key });
    return false;
  }

  /** Another node answered the request: the disputed nodes were at fault. */
  answered(now: number, events: RouteEvents): void {
    if (this.#open !== undefined) this.#settle(undefined, now, events);
  }

  #settle(agreed: string | undefined, now: number, events: RouteEvents): void {
    for (const dispute of this.#open ?? []) {
      if (dispute.key !== agreed) penalizeNode(dispute.node, REASON, 0, now, events);
    }
    this.#open = undefined;
  }
}

/**
 * What one request (or one batch element) has heard from nodes that did not answer it: the
 * unknown errors in dispute, and the upstream error to relay if no node does better (docs/
 * routing.md §3, "never a synthetic error where an upstream answered"). `H` is how the error
 * is kept: the attempt for a single request, the element's answer text in a batch.
 */
export interface Hearing<H> {
  held: H | undefined;
  disputes: Disputes | undefined;
}

/** A node answered the request successfully: the nodes that disputed it were at fault. */
export function heardAnswer(hearing: Hearing<unknown>, now: number, events: RouteEvents): void {
  hearing.disputes?.answered(now, events);
}

/**
 * `node` answered with a relayable upstream error (`verdict`, agreement `key`, kept as `held`).
 * True when a second node gave the same unknown error: it is the request's answer. Otherwise
 * it is held, to relay if routing ends without a better one.
 */
export function heardError<H>(
  hearing: Hearing<H>,
  node: UpstreamNode,
  verdict: Verdict,
  key: string | undefined,
  held: H,
  now: number,
  events: RouteEvents,
): boolean {
  if (
    verdict.penalty === 'disputed' &&
    key !== undefined &&
    (hearing.disputes ??= new Disputes()).agree(node, key, now, events)
  ) {
    return true;
  }
  hearing.held = held;
  return false;
}
