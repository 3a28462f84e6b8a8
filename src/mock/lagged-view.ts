/**
 * A mock node's view of its chain `lag()` slots/blocks behind the head (issue 26): a lagging
 * replica serves an older slot and block, advancing at the chain's pace; a negative lag is a
 * node reporting a head in the future. Timestamps of a given slot or block stay the chain's.
 */
import type { ChainView } from './chain-clock.js';

const SLOTS_PER_EPOCH = 432_000;

/** `view` seen `lag()` behind; `view` itself while the lag is 0. */
export function laggedView(view: ChainView, lag: () => number): ChainView {
  return {
    slot: () => view.slot() - lag(),
    blockHeight: () => view.blockHeight() - lag(),
    epoch: () => {
      if (lag() === 0) return view.epoch();
      const absoluteSlot = view.slot() - lag();
      return {
        epoch: Math.floor(absoluteSlot / SLOTS_PER_EPOCH),
        slotIndex: absoluteSlot % SLOTS_PER_EPOCH,
        slotsInEpoch: SLOTS_PER_EPOCH,
        absoluteSlot,
      };
    },
    slotTime: (slot) => view.slotTime(slot),
    blockNumber: () => view.blockNumber() - lag(),
    blockTime: (n) => view.blockTime(n),
  };
}
