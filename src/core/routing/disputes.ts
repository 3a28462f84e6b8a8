/**
 * Agreement on unknown errors (docs/routing.md §3): an error nothing is known about is settled
 * by a second opinion. When another node answers the same request with the same code and
 * message, the error is the request's: relayed, and nobody is penalized for it. When another
 * node answers successfully, every node that gave an unknown error was at fault after all.
 */
import type { UpstreamNode } from '../node/upstream-node.js';
import { penalizeNode, type RouteEvents } from './attempt.js';

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
