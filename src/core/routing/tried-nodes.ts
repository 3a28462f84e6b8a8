/**
 * The nodes one candidate (a request, or a batch element) was sent to or that cannot serve it:
 * never offered to it again (docs/routing.md §2). Nearly every request tries one node, so the
 * first is kept in a slot and an array is made only for a second.
 *
 * The set's rules are functions over its two slots, so a request's routing state keeps the
 * slots in its own fields (request-route.ts) instead of extending a class: Node 20's V8 does
 * not inline a derived class's `super()` call.
 */
import type { UpstreamNode } from '../node/upstream-node.js';

/** A small set of nodes, in the order added. */
export interface NodeSet {
  includes(node: UpstreamNode): boolean;
  push(node: UpstreamNode): void;
  /** Forgets `node` (a node that refused a batch may take the element again, alone). */
  remove(node: UpstreamNode): void;
}

/** Where a NodeSet keeps its nodes: the first in a slot, the rest (rare) in an array. */
export interface TriedSlots {
  firstTried: UpstreamNode | undefined;
  moreTried: UpstreamNode[] | undefined;
}

export function triedIncludes(slots: TriedSlots, node: UpstreamNode): boolean {
  return (
    slots.firstTried === node || (slots.moreTried !== undefined && slots.moreTried.includes(node))
  );
}

export function triedPush(slots: TriedSlots, node: UpstreamNode): void {
  if (slots.firstTried === undefined) slots.firstTried = node;
  else (slots.moreTried ??= []).push(node);
}

export function triedRemove(slots: TriedSlots, node: UpstreamNode): void {
  if (slots.firstTried === node) {
    slots.firstTried = slots.moreTried?.shift();
  } else if (slots.moreTried !== undefined) {
    const index = slots.moreTried.indexOf(node);
    if (index !== -1) slots.moreTried.splice(index, 1);
  }
}

/** A NodeSet of its own (a batch element's). */
export class TriedNodes implements NodeSet, TriedSlots {
  firstTried: UpstreamNode | undefined = undefined;
  moreTried: UpstreamNode[] | undefined = undefined;

  includes(node: UpstreamNode): boolean {
    return triedIncludes(this, node);
  }

  push(node: UpstreamNode): void {
    triedPush(this, node);
  }

  remove(node: UpstreamNode): void {
    triedRemove(this, node);
  }
}
