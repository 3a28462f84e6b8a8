/**
 * Heads from subscriptions cascade already holds (issue 26): a Solana slot notification is the
 * node's processed slot, a root notification its finalized root, an EVM newHeads notification
 * its latest block. Byte scans of the notification's result, as the node wrote it.
 */
import { memberNumberOf, numberAt } from '../protocol/head-scan.js';
import { Bound, Family, Level, headSlot, type ChainState, type NodeHeads } from './chain-state.js';

/** Records the head a notification of stream `kind` shows (other kinds show none). */
export function readStreamHead(
  chain: ChainState,
  node: NodeHeads,
  kind: string,
  result: Buffer,
  now: number,
): void {
  switch (kind) {
    case 'slot':
      record(
        chain,
        node,
        headSlot(Family.solana, Level.latest),
        memberNumberOf(result, 'slot'),
        now,
      );
      break;
    case 'root':
      record(
        chain,
        node,
        headSlot(Family.solana, Level.finalized),
        numberAt(result, 0, result.length),
        now,
      );
      break;
    case 'newHeads':
      record(
        chain,
        node,
        headSlot(Family.evm, Level.latest),
        memberNumberOf(result, 'number'),
        now,
      );
      break;
  }
}

function record(
  chain: ChainState,
  node: NodeHeads,
  slot: number,
  value: number,
  now: number,
): void {
  if (value >= 0) chain.observe(node, slot, value, Bound.exact, now);
}
