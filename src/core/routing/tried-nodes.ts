/**
 * The nodes one candidate (a request, or a batch element) was sent to or that cannot serve it:
 * never offered to it again (docs/routing.md §2). Nearly every request tries one node, so the
 * first is kept in a slot and an array is made only for a second.
 */
import type { UpstreamNode } from '../node/upstream-node.js';

/** A small set of nodes, in the order added. */
export class TriedNodes {
  #first: UpstreamNode | undefined = undefined;
  #more: UpstreamNode[] | undefined = undefined;

  includes(node: UpstreamNode): boolean {
    return this.#first === node || (this.#more !== undefined && this.#more.includes(node));
  }

  push(node: UpstreamNode): void {
    if (this.#first === undefined) this.#first = node;
    else (this.#more ??= []).push(node);
  }

  /** Forgets `node` (a node that refused a batch may take the element again, alone). */
  remove(node: UpstreamNode): void {
    if (this.#first === node) {
      this.#first = this.#more?.shift();
    } else if (this.#more !== undefined) {
      const index = this.#more.indexOf(node);
      if (index !== -1) this.#more.splice(index, 1);
    }
  }
}
