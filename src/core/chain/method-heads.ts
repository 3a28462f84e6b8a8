/**
 * Per method: which head its answer shows (and so which byte scan reads it), and how far
 * behind a node may be to serve it (its tolerance class). Looked up by method id, one array
 * load on the request path: standard methods have the same ids in every MethodRegistry (they
 * are interned first, in STANDARD_METHODS order); `[custom]` methods read no head and are never
 * judged.
 */
import { MethodRegistry } from '../protocol/method-registry.js';
import { Family } from './chain-state.js';

/** What an answer says about its node's head. */
export const Reads = {
  nothing: 0,
  /** Solana `context.slot` in the `result` envelope. */
  contextSlot: 1,
  /** Solana getSlot: the result is the slot. */
  slotResult: 2,
  /** Solana getEpochInfo: `absoluteSlot`. */
  epochInfo: 3,
  /** EVM eth_blockNumber: the result is the latest block. */
  blockNumberResult: 4,
  /** EVM eth_getBlockByNumber: the block's `number` (null: that block is beyond the node). */
  blockByNumber: 5,
  /** EVM receipts, logs and transactions: their `blockNumber`, a lower bound. */
  blockNumberField: 6,
} as const;
export type Reads = (typeof Reads)[keyof typeof Reads];

/** How much lag a method tolerates. */
export const Tolerance = {
  /** By-hash lookups of final data, writes, custom methods: lag is not judged. */
  none: 0,
  /** Methods that ask for the head itself: not a slot/block behind. */
  head: 1,
  /** State reads: up to the chain's `max_lag`. */
  state: 2,
} as const;
export type Tolerance = (typeof Tolerance)[keyof typeof Tolerance];

export interface MethodHeads {
  readonly family: Family;
  readonly reads: Reads;
  readonly tolerance: Tolerance;
  /** EVM: index of the block parameter in `params` (-1: none; LOGS_FILTER: a filter's toBlock). */
  readonly blockParam: number;
}

/** blockParam of eth_getLogs: the block asked is the filter's `toBlock` (absent: latest). */
export const LOGS_FILTER = -2;

const SOLANA_HEAD: readonly string[] = [
  'getSlot',
  'getBlockHeight',
  'getEpochInfo',
  'getLatestBlockhash',
];
const SOLANA_CONTEXT: readonly string[] = [
  'getAccountInfo',
  'getBalance',
  'getMultipleAccounts',
  'getProgramAccounts',
  'getTokenAccountBalance',
  'getTokenAccountsByOwner',
  'getTokenAccountsByDelegate',
  'getTokenLargestAccounts',
  'getTokenSupply',
  'getSupply',
  'getLargestAccounts',
  'getSignatureStatuses',
  'isBlockhashValid',
  'getFeeForMessage',
  'simulateTransaction',
];
/** EVM state reads and the parameter that names their block. */
const EVM_STATE: ReadonlyMap<string, number> = new Map([
  ['eth_call', 1],
  ['eth_getBalance', 1],
  ['eth_getCode', 1],
  ['eth_getTransactionCount', 1],
  ['eth_getStorageAt', 2],
  ['eth_estimateGas', 1],
  ['eth_getBlockByNumber', 0],
  ['eth_getBlockTransactionCountByNumber', 0],
  ['eth_getTransactionReceipt', -1],
  ['eth_getLogs', LOGS_FILTER],
  ['eth_getBlockReceipts', 0],
  ['eth_feeHistory', -1],
  ['eth_gasPrice', -1],
  ['eth_maxPriorityFeePerGas', -1],
]);

function entryOf(name: string): MethodHeads | undefined {
  if (name === 'getSlot') return solana(Reads.slotResult, Tolerance.head);
  if (name === 'getEpochInfo') return solana(Reads.epochInfo, Tolerance.head);
  if (name === 'getLatestBlockhash') return solana(Reads.contextSlot, Tolerance.head);
  if (SOLANA_HEAD.includes(name)) return solana(Reads.nothing, Tolerance.head);
  if (SOLANA_CONTEXT.includes(name)) return solana(Reads.contextSlot, Tolerance.state);
  if (name === 'eth_blockNumber') return evm(Reads.blockNumberResult, Tolerance.head, -1);
  const blockParam = EVM_STATE.get(name);
  if (blockParam === undefined) return undefined;
  if (name === 'eth_getBlockByNumber') return evm(Reads.blockByNumber, Tolerance.state, 0);
  const field = name === 'eth_getTransactionReceipt' || name === 'eth_getLogs';
  return evm(field ? Reads.blockNumberField : Reads.nothing, Tolerance.state, blockParam);
}

const solana = (reads: Reads, tolerance: Tolerance): MethodHeads => ({
  family: Family.solana,
  reads,
  tolerance,
  blockParam: -1,
});
const evm = (reads: Reads, tolerance: Tolerance, blockParam: number): MethodHeads => ({
  family: Family.evm,
  reads,
  tolerance,
  blockParam,
});

function buildTable(): readonly (MethodHeads | undefined)[] {
  const registry = new MethodRegistry();
  return registry.standardNames().map(entryOf);
}

const TABLE = buildTable();

/** What method `methodId` shows and tolerates; undefined: nothing (never judged). */
export function methodHeads(methodId: number): MethodHeads | undefined {
  return methodId >= 0 && methodId < TABLE.length ? TABLE[methodId] : undefined;
}

/** The tolerance table the README shows: method → class. */
export function toleranceTable(): readonly { method: string; tolerance: Tolerance }[] {
  const registry = new MethodRegistry();
  return registry
    .standardNames()
    .map((method, id) => ({ method, tolerance: TABLE[id]?.tolerance ?? Tolerance.none }))
    .filter((row) => row.tolerance !== Tolerance.none);
}
