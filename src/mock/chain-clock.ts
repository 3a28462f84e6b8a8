/**
 * A pretend chain head that advances with wall time: a Solana slot every 400 ms and an EVM
 * block every 12 s. Every node in the process shares one clock, so they agree like real
 * replicas of one chain do.
 */

const SOLANA_BASE_SLOT = 320_000_000;
/** Skipped slots make block height trail the slot; the gap is fixed here. */
const SOLANA_HEIGHT_GAP = 21_500_000;
const SLOT_MS = 400;
const SLOTS_PER_EPOCH = 432_000;
const EVM_BASE_BLOCK = 21_000_000;
const BLOCK_MS = 12_000;

/** Reads the pretend head at the current time. */
export class ChainClock {
  readonly #startMs: number;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
    this.#startMs = now();
  }

  /** Current Solana slot. */
  slot(): number {
    return SOLANA_BASE_SLOT + Math.floor((this.#now() - this.#startMs) / SLOT_MS);
  }

  /** Current Solana block height. */
  blockHeight(): number {
    return this.slot() - SOLANA_HEIGHT_GAP;
  }

  /** Epoch fields of getEpochInfo at the current slot. */
  epoch(): { epoch: number; slotIndex: number; slotsInEpoch: number; absoluteSlot: number } {
    const absoluteSlot = this.slot();
    return {
      epoch: Math.floor(absoluteSlot / SLOTS_PER_EPOCH),
      slotIndex: absoluteSlot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      absoluteSlot,
    };
  }

  /** Unix seconds at which `slot` was produced (estimated, like getBlockTime). */
  slotTime(slot: number): number {
    return Math.floor((this.#now() - (this.slot() - slot) * SLOT_MS) / 1000);
  }

  /** Current EVM block number. */
  blockNumber(): number {
    return EVM_BASE_BLOCK + Math.floor((this.#now() - this.#startMs) / BLOCK_MS);
  }

  /** Unix seconds of EVM block `n`. */
  blockTime(n: number): number {
    return Math.floor((this.#now() - (this.blockNumber() - n) * BLOCK_MS) / 1000);
  }
}

/** What answers read of the chain: a ChainClock, or a MockChain driven by tests. */
export type ChainView = Pick<
  ChainClock,
  'slot' | 'blockHeight' | 'epoch' | 'slotTime' | 'blockNumber' | 'blockTime'
>;

/** The process-wide clock every node reads. */
export const CHAIN = new ChainClock();
