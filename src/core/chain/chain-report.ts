/**
 * What the operator sees of a node's chain state (/health, /metrics, `cascade status`): its
 * fresh heads by commitment, and how far behind it is.
 */
import {
  LEVEL_NAMES,
  headSlot,
  type ChainState,
  type Family,
  type Level,
  type NodeHeads,
} from './chain-state.js';

export interface NodeChainReport {
  /** Fresh heads by commitment name (`processed`…, `latest`…); empty when none is known. */
  readonly heads: Readonly<Record<string, number>>;
  /** Slots/blocks behind the chain's head at the most current commitment known; -1 unknown. */
  readonly lag: number;
  /** Refused by the chain-identity check. */
  readonly wrongChain: boolean;
}

/** One node's report at `now`. */
export function nodeChainReport(chain: ChainState, node: NodeHeads, now: number): NodeChainReport {
  const heads: Record<string, number> = {};
  let lag = -1;
  for (let family = 0; family < LEVEL_NAMES.length; family++) {
    const names = LEVEL_NAMES[family]!;
    for (let level = 0; level < names.length; level++) {
      const slot = headSlot(family as Family, level as Level);
      const head = chain.headOf(node, slot, now);
      if (head < 0) continue;
      heads[names[level]!] = head;
      if (lag === -1) lag = chain.lagOf(node, slot, now);
    }
  }
  return { heads, lag, wrongChain: node.wrongChain };
}
