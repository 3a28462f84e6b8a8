/**
 * The chain mock nodes follow, as events their WebSocket subscriptions turn into notifications:
 * new slots and blocks, transactions landing, accounts changing. Every node of a process shares
 * one chain by default (replicas of one network agree on slots, block hashes and which
 * transactions landed), so a subscription moved from one node to another sees the same history.
 *
 * `auto` follows the wall-clock ChainClock (a slot every 400 ms, a block every 12 s) and
 * polls it only while someone listens; `manual` moves only when a test says so, which is how
 * tests get exact, machine-speed-independent sequences.
 */
import { CHAIN, type ChainClock, type ChainView } from '../chain-clock.js';
import type { TransactionChain } from '../mempool.js';
import type { MockAccount, TransactionStatus } from '../method-spec.js';

const SLOT_MS = 400;
const BLOCK_MS = 12_000;
/** Auto mode polls the clock this often while listened to. */
const POLL_MS = 100;
/** At most this many slots are announced per poll (a process paused for minutes catches up). */
const MAX_CATCH_UP = 64;
/** Landed transactions remembered (oldest forgotten first), like a node's status cache. */
const MAX_LANDED = 50_000;

/** Something that happened on the chain. */
export type ChainEvent =
  | { readonly kind: 'slot'; readonly slot: number }
  | { readonly kind: 'block'; readonly number: number }
  | {
      readonly kind: 'landed';
      readonly chain: TransactionChain;
      readonly id: string;
      readonly slot: number;
    }
  | { readonly kind: 'pending'; readonly chain: TransactionChain; readonly id: string }
  | {
      readonly kind: 'account';
      readonly pubkey: string;
      readonly account: MockAccount;
      readonly slot: number;
    };

/** How a chain moves. */
export interface MockChainOptions {
  /** true: only advanceSlots/advanceBlocks move it. Default false (wall clock). */
  readonly manual?: boolean;
  /** The clock auto mode follows and manual mode starts from (default: the process's). */
  readonly clock?: ChainClock;
}

/** A chain of slots (Solana) and blocks (EVM) with the transactions and accounts on it. */
export class MockChain implements ChainView {
  readonly manual: boolean;
  readonly #clock: ChainClock;
  readonly #listeners = new Set<(event: ChainEvent) => void>();
  /** Accepted, not yet landed: key → the slot it was accepted in. */
  readonly #pending = new Map<string, number>();
  readonly #landed = new Map<string, number>();
  readonly #accounts = new Map<string, MockAccount>();
  #slot: number;
  #block: number;
  /** The last slot and block announced to listeners. */
  #announcedSlot: number;
  #announcedBlock: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MockChainOptions = {}) {
    this.manual = options.manual ?? false;
    this.#clock = options.clock ?? CHAIN;
    this.#slot = this.#clock.slot();
    this.#block = this.#clock.blockNumber();
    this.#announcedSlot = this.#slot;
    this.#announcedBlock = this.#block;
  }

  slot(): number {
    return this.manual ? this.#slot : this.#clock.slot();
  }

  blockHeight(): number {
    return this.slot() - (this.#clock.slot() - this.#clock.blockHeight());
  }

  epoch(): { epoch: number; slotIndex: number; slotsInEpoch: number; absoluteSlot: number } {
    const base = this.#clock.epoch();
    const absoluteSlot = this.slot();
    return {
      epoch: Math.floor(absoluteSlot / base.slotsInEpoch),
      slotIndex: absoluteSlot % base.slotsInEpoch,
      slotsInEpoch: base.slotsInEpoch,
      absoluteSlot,
    };
  }

  slotTime(slot: number): number {
    const head = this.#clock.slotTime(this.#clock.slot());
    return Math.floor(head - ((this.slot() - slot) * SLOT_MS) / 1000);
  }

  blockNumber(): number {
    return this.manual ? this.#block : this.#clock.blockNumber();
  }

  blockTime(n: number): number {
    const head = this.blockNumber();
    return Math.floor(
      this.#clock.blockTime(this.#clock.blockNumber()) - ((head - n) * BLOCK_MS) / 1000,
    );
  }

  /** Hears every event from now on; returns the function that stops it. */
  listen(listener: (event: ChainEvent) => void): () => void {
    this.#listeners.add(listener);
    if (!this.manual && this.#timer === undefined) {
      this.#announcedSlot = this.#clock.slot();
      this.#announcedBlock = this.#clock.blockNumber();
      this.#timer = setInterval(() => this.#poll(), POLL_MS);
      this.#timer.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** Manual mode: `count` new slots, each announced (and landing what was pending). */
  advanceSlots(count = 1): void {
    this.#assertManual('advanceSlots');
    for (let i = 0; i < count; i++) this.#newSlot(++this.#slot);
  }

  /** Manual mode: `count` new EVM blocks, each announced. */
  advanceBlocks(count = 1): void {
    this.#assertManual('advanceBlocks');
    for (let i = 0; i < count; i++) this.#emit({ kind: 'block', number: ++this.#block });
  }

  /** A node accepted a transaction: pending now, landed at the next slot. */
  accept(chain: TransactionChain, id: string): void {
    const key = `${chain}:${id}`;
    if (this.#pending.has(key) || this.#landed.has(key)) return;
    this.#pending.set(key, this.slot());
    this.#emit({ kind: 'pending', chain, id });
  }

  /** Where a transaction stands: pending, landed in a slot, or never seen. */
  statusOf(chain: TransactionChain, id: string): TransactionStatus {
    const key = `${chain}:${id}`;
    const landed = this.#landed.get(key);
    if (landed !== undefined) return { slot: landed };
    const accepted = this.#pending.get(key);
    if (accepted === undefined) return undefined;
    // Auto mode lands lazily too, so a status read between polls is already right.
    const now = this.slot();
    return now > accepted ? { slot: accepted + 1 } : 'pending';
  }

  /** Changes an account (announced to its account and program subscribers). */
  setAccount(pubkey: string, account: Partial<MockAccount> = {}): void {
    const before = this.#accounts.get(pubkey);
    const next: MockAccount = {
      lamports: account.lamports ?? (before?.lamports ?? 2_500_000_000) + 1,
      data: account.data ?? before?.data ?? new Uint8Array(0),
      owner: account.owner ?? before?.owner ?? '11111111111111111111111111111111',
    };
    this.#accounts.set(pubkey, next);
    this.#emit({ kind: 'account', pubkey, account: next, slot: this.slot() });
  }

  /** An account changed with setAccount, or undefined. */
  account(pubkey: string): MockAccount | undefined {
    return this.#accounts.get(pubkey);
  }

  #assertManual(what: string): void {
    if (!this.manual) throw new Error(`MockChain.${what}: only a manual chain moves by hand`);
  }

  #poll(): void {
    const slot = this.#clock.slot();
    const from = Math.max(this.#announcedSlot + 1, slot - MAX_CATCH_UP + 1);
    for (let s = from; s <= slot; s++) this.#newSlot(s);
    this.#announcedSlot = Math.max(this.#announcedSlot, slot);
    const block = this.#clock.blockNumber();
    for (let n = Math.max(this.#announcedBlock + 1, block - MAX_CATCH_UP + 1); n <= block; n++) {
      this.#emit({ kind: 'block', number: n });
    }
    this.#announcedBlock = Math.max(this.#announcedBlock, block);
  }

  #newSlot(slot: number): void {
    this.#emit({ kind: 'slot', slot });
    for (const [key, accepted] of this.#pending) {
      if (accepted >= slot) continue;
      this.#pending.delete(key);
      this.#landed.set(key, slot);
      if (this.#landed.size > MAX_LANDED) this.#landed.delete(this.#landed.keys().next().value!);
      const colon = key.indexOf(':');
      const chain = key.slice(0, colon) as TransactionChain;
      this.#emit({ kind: 'landed', chain, id: key.slice(colon + 1), slot });
    }
  }

  #emit(event: ChainEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

/** The chain every mock node follows unless given its own. */
export const DEFAULT_MOCK_CHAIN = new MockChain();
