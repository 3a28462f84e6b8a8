/**
 * The one place that knows the chain (issue 26): each node's heads as its own answers showed
 * them, and the chain's head that the nodes agree on. Pure — every call takes the clock reading
 * — so tests drive it with ManualClock readings and nothing here touches the network.
 *
 * Heads are kept per family (Solana slots and EVM blocks never mix: the mock and multi-chain
 * gateways answer both) and per commitment level (Solana processed/confirmed/finalized, EVM
 * latest/safe/finalized), each with when it was seen. A sample older than `maxAgeMs` is gone:
 * the node is then *unknown*, never "0 behind".
 *
 * The chain's head is not the highest sample: it is the highest one another node confirms,
 * that is, another node's fresh head lies within `confirmWindow` below it. A node on the wrong
 * chain or reporting garbage far in the future therefore cannot make every honest node look
 * behind, and with a single node there is no head to judge lag against.
 */

import { DEFAULT_CHAIN_FIELDS, type ChainFields } from '../config/chain-fields.js';

/** Which numbering a head is in. */
export const Family = { solana: 0, evm: 1 } as const;
export type Family = (typeof Family)[keyof typeof Family];

/** Commitment levels: Solana processed/confirmed/finalized, EVM latest/safe/finalized. */
export const Level = { latest: 0, safe: 1, finalized: 2 } as const;
export type Level = (typeof Level)[keyof typeof Level];

export const LEVEL_NAMES: readonly (readonly string[])[] = [
  ['processed', 'confirmed', 'finalized'],
  ['latest', 'safe', 'finalized'],
];

const LEVELS = 3;
const SLOTS = 2 * LEVELS;
/** How long a computed chain head is reused before samples are looked at again. */
const HEAD_CACHE_MS = 200;

/** The index of one (family, level) head. */
export function headSlot(family: Family, level: Level): number {
  return family * LEVELS + level;
}

/**
 * One node's reading as it crosses between the workers of `--workers N`: node name, head slot
 * (`headSlot`), value as stored, Bound, and its age in ms when sent.
 */
export type RelayedReading = readonly [
  node: string,
  slot: number,
  value: number,
  bound: number,
  ageMs: number,
];

/**
 * The readings of `heads` this process made itself at or after `since`, ages in ms at `now`:
 * what a worker of `--workers N` reports so that the other workers know the heads too.
 */
export function ownReadings(
  heads: NodeHeads,
  since: number,
  now: number,
  into: RelayedReading[],
): void {
  for (let slot = 0; slot < SLOTS; slot++) {
    const seenAt = heads.seenAt[slot]!;
    if (heads.values[slot]! < 0 || heads.relayed[slot] === 1 || seenAt < since) continue;
    into.push([heads.name, slot, heads.values[slot]!, heads.bound[slot]!, now - seenAt]);
  }
}

/** What a reading says about a node's head. */
export const Bound = {
  /** The head is this (eth_blockNumber, getSlot, context.slot). */
  exact: 0,
  /** The head is at least this (a receipt's or log's block). */
  atLeast: 1,
  /** The head is below this (null / header not found for this block). */
  below: 2,
} as const;
export type Bound = (typeof Bound)[keyof typeof Bound];

/** One node's heads; lives as long as the node's name stays in the config. */
export class NodeHeads {
  /** -1: never seen. */
  readonly values = new Float64Array(SLOTS).fill(-1);
  readonly seenAt = new Float64Array(SLOTS);
  /**
   * What the last reading in a slot was (a Bound): the head itself (eth_blockNumber, getSlot),
   * an upper bound (a null for the next block: behind it, so known to be behind), or only a
   * lower bound (a log's or receipt's block): the node is at least there, maybe further — not
   * known to be behind anything above it, and no reading of the chain's head now.
   */
  readonly bound = new Uint8Array(SLOTS);
  /**
   * 1 where the reading came from another worker of `--workers N` (through the primary), 0
   * where this process saw it: only its own readings are reported on, so none echoes back.
   */
  readonly relayed = new Uint8Array(SLOTS);
  /** Set by the chain-identity check: never counted, never routed to. */
  wrongChain = false;

  constructor(readonly name: string) {}
}

export interface ChainStateOptions {
  /** A sample older than this is forgotten (ms). */
  readonly maxAgeMs: number;
  /** A head counts once another node's head is within this many slots/blocks below it. */
  readonly confirmWindow: number;
  /** How far behind (slots, blocks) a node may be for state reads, by Family. */
  readonly maxLag: readonly [solana: number, evm: number];
  /** Share (0..1) of head-showing reads sent to a node whose head is unknown or old. */
  readonly sampleShare?: number;
}

/**
 * How far below what a method tolerates an answer may be and still be relayed, by Family
 * (Solana slots, EVM blocks): honest nodes differ by a slot or two, and a stale-answer retry
 * is a paid round trip, so at tolerance 0 (getSlot, eth_blockNumber, getLatestBlockhash) an
 * answer 1–2 behind is not worth one. Lag-aware admission (free: it only picks another node)
 * does not use it.
 */
export const STALE_ALLOWANCE: readonly [solana: number, evm: number] = [2, 1];

/** How far another node's head may lie below the chain's head and still confirm it. */
export const CONFIRM_WINDOW = 1000;

/** The tracker's options from `[server]` (absent: the shipped defaults). */
export function chainOptions(fields: ChainFields = DEFAULT_CHAIN_FIELDS): ChainStateOptions {
  return {
    maxAgeMs: fields.headMaxAgeSeconds * 1000,
    confirmWindow: CONFIRM_WINDOW,
    maxLag: fields.maxLag,
    sampleShare: fields.headSamplePercent / 100,
  };
}

export const DEFAULT_CHAIN_OPTIONS: ChainStateOptions = chainOptions();

/** Every node's heads and the chain's head per (family, level). */
export class ChainState {
  #options: ChainStateOptions;
  readonly #nodes = new Map<string, NodeHeads>();
  /** Set by the first sample: until then no lag is ever judged (plain fleets cost nothing). */
  active = false;
  readonly #head = new Float64Array(SLOTS).fill(-1);
  readonly #headAt = new Float64Array(SLOTS).fill(-Infinity);
  #version = 0;
  readonly #headVersion = new Float64Array(SLOTS).fill(-1);
  /** Reused by the head computation (no array per answer). */
  #scratch = new Float64Array(8);

  constructor(options: ChainStateOptions = DEFAULT_CHAIN_OPTIONS) {
    this.#options = options;
  }

  get options(): ChainStateOptions {
    return this.#options;
  }

  /** Owed samples: grows by sampleShare per head-showing read, one sample spends 1. */
  #sampleCredit = 0;

  /** Whether this head-showing read should go to a node whose head is unknown or old. */
  sampleDue(): boolean {
    const share = this.#options.sampleShare ?? 0;
    if (share <= 0) return false;
    this.#sampleCredit += share;
    if (this.#sampleCredit < 1) return false;
    this.#sampleCredit -= 1;
    return true;
  }

  /** A reload may change the age and window; samples are kept. */
  configure(options: ChainStateOptions): void {
    this.#options = options;
    this.#version++;
  }

  /** The heads of node `name` (created and counted from now on). */
  nodeHeads(name: string): NodeHeads {
    let heads = this.#nodes.get(name);
    if (heads === undefined) {
      heads = new NodeHeads(name);
      this.track(heads);
    }
    return heads;
  }

  /** Counts `heads` (a node's own, kept across reloads) from now on. */
  track(heads: NodeHeads): void {
    this.#nodes.set(heads.name, heads);
    this.#version++;
  }

  /** A node removed by a reload no longer counts towards the chain head. */
  forget(name: string): void {
    if (this.#nodes.delete(name)) this.#version++;
  }

  /** Every node tracked, in the order they were added. */
  all(): IterableIterator<NodeHeads> {
    return this.#nodes.values();
  }

  /** The node's fresh head in `slot`, or -1 (never seen, or older than maxAgeMs). */
  headOf(heads: NodeHeads, slot: number, now: number): number {
    const value = heads.values[slot]!;
    if (value < 0 || now - heads.seenAt[slot]! > this.#options.maxAgeMs) return -1;
    return value;
  }

  /** Records what one answer said about a node's head. */
  observe(heads: NodeHeads, slot: number, value: number, bound: Bound, now: number): void {
    if (!Number.isSafeInteger(value) || value < 0) return;
    // "Block N is missing" is stored as "at most N - 1".
    if (bound === Bound.below && --value < 0) return;
    this.#record(heads, slot, value, bound, now, now, 0);
  }

  /**
   * Takes a reading another worker recorded (`value` as it stored it: a `below` bound is
   * already one under the block that was missing) `seenAt` on this process's clock, unless
   * this process has a newer one of its own or the reading has expired.
   */
  observeRelayed(
    heads: NodeHeads,
    slot: number,
    reading: RelayedReading,
    seenAt: number,
    now: number,
  ): void {
    const [, , value, bound] = reading;
    if (!Number.isSafeInteger(value) || value < 0 || bound > Bound.below) return;
    if (now - seenAt > this.#options.maxAgeMs) return;
    if (heads.values[slot]! >= 0 && heads.seenAt[slot]! >= seenAt) return;
    this.#record(heads, slot, value, bound as Bound, seenAt, now, 1);
  }

  #record(
    heads: NodeHeads,
    slot: number,
    value: number,
    bound: Bound,
    seenAt: number,
    now: number,
    relayed: number,
  ): void {
    const current = this.headOf(heads, slot, now);
    // A lower bound under the known head adds nothing; an upper bound above it says nothing.
    if (
      bound === Bound.atLeast
        ? current >= value
        : bound === Bound.below && current !== -1 && current <= value
    )
      return;
    // A new value (or one that had expired) can move the chain head; a repeat only refreshes.
    if (heads.values[slot] !== value || current === -1) this.#version++;
    heads.values[slot] = value;
    heads.seenAt[slot] = seenAt;
    heads.bound[slot] = bound;
    heads.relayed[slot] = relayed;
    this.active = true;
  }

  /** The chain's head in `slot`: the highest fresh head another node confirms, or -1. */
  chainHead(slot: number, now: number): number {
    if (this.#headVersion[slot] === this.#version && now - this.#headAt[slot]! < HEAD_CACHE_MS) {
      return this.#head[slot]!;
    }
    const head = this.#computeHead(slot, now);
    this.#head[slot] = head;
    this.#headAt[slot] = now;
    this.#headVersion[slot] = this.#version;
    return head;
  }

  /** How far `heads` is behind the chain head, or -1 when either is unknown. */
  lagOf(heads: NodeHeads, slot: number, now: number): number {
    const own = this.headOf(heads, slot, now);
    if (own < 0) return -1;
    const head = this.chainHead(slot, now);
    if (head < 0) return -1;
    return own >= head ? 0 : head - own;
  }

  /**
   * `knownHead`, but only when some node showed its head itself in `slot` at most `ageMs` ago,
   * else -1: for readers that would otherwise ask the network for the head right now (gap fill,
   * an eth_getLogs `latest`). A bound is no head: a range of logs ends where the logs do, not
   * where the chain does, and a null for block N says only that the head is below N.
   */
  recentHead(slot: number, now: number, ageMs: number): number {
    let newest = -Infinity;
    for (const heads of this.#nodes.values()) {
      if (
        !heads.wrongChain &&
        heads.values[slot]! >= 0 &&
        heads.bound[slot] === Bound.exact &&
        heads.seenAt[slot]! > newest
      )
        newest = heads.seenAt[slot]!;
    }
    return now - newest <= ageMs ? this.knownHead(slot, now) : -1;
  }

  /**
   * Whether `heads` is known to be more than its family's `max_lag` behind the chain head at
   * any commitment level (unknown is never behind). Subscription placement reads it: a
   * failover or move goes to a fresh node of the same tier before a lagging one.
   */
  lagging(heads: NodeHeads, now: number): boolean {
    if (!this.active || heads.wrongChain) return false;
    for (let slot = 0; slot < SLOTS; slot++) {
      const lag = this.lagOf(heads, slot, now);
      if (lag > this.#options.maxLag[slot < LEVELS ? Family.solana : Family.evm]) return true;
    }
    return false;
  }

  /** The highest value `knownHead` ever gave per slot: final blocks stay final. */
  readonly #finalMark = new Float64Array(SLOTS).fill(-1);

  /**
   * The best head the fleet agrees on in `slot`, for readers that need one even with a single
   * node (the cache's finality, WebSocket gap fill): the chain head when two nodes confirm
   * one; with a single fresh sample, that sample (one node cannot be out-voted — as before the
   * tracker, the only source is trusted); -1 when nothing fresh is known. Wrong-chain nodes
   * never count.
   */
  knownHead(slot: number, now: number): number {
    const head = this.chainHead(slot, now);
    if (head >= 0) return head;
    let only = -1;
    let count = 0;
    for (const heads of this.#nodes.values()) {
      if (heads.wrongChain) continue;
      const value = this.headOf(heads, slot, now);
      if (value >= 0) {
        only = value;
        count++;
      }
    }
    return count === 1 ? only : -1;
  }

  /**
   * The highest EVM block known to be final, or -1 while unknown: the fleet's finalized head
   * (eth_getBlockByNumber("finalized") answers), or with `depth` (`evm_finality_depth`) its
   * latest head minus the depth — whichever is higher. It only moves forward: a lagging node's
   * older answer, or a sample expiring, never lowers it. The cache reads it (one tracker).
   */
  evmFinalizedBlock(depth: number | undefined, now: number): number {
    const finalized = this.#mark(headSlot(Family.evm, Level.finalized), now);
    if (depth === undefined) return finalized;
    const latest = this.#mark(headSlot(Family.evm, Level.latest), now);
    return Math.max(finalized, latest < 0 ? -1 : Math.max(-1, latest - depth));
  }

  #mark(slot: number, now: number): number {
    const known = this.knownHead(slot, now);
    if (known > this.#finalMark[slot]!) this.#finalMark[slot] = known;
    return this.#finalMark[slot]!;
  }

  #computeHead(slot: number, now: number): number {
    if (this.#scratch.length < this.#nodes.size)
      this.#scratch = new Float64Array(this.#nodes.size * 2);
    const fresh = this.#scratch;
    let count = 0;
    for (const heads of this.#nodes.values()) {
      if (heads.wrongChain) continue;
      const value = this.headOf(heads, slot, now);
      if (value >= 0) fresh[count++] = value;
    }
    if (count < 2) return -1;
    // Typed arrays sort numerically, low to high, in place: the nearest head below each
    // (the one that could confirm it) is the one before it.
    const sorted = fresh.subarray(0, count).sort();
    const window = this.#options.confirmWindow;
    for (let i = count - 1; i > 0; i--) {
      if (sorted[i]! - sorted[i - 1]! <= window) return sorted[i]!;
    }
    return -1;
  }
}
