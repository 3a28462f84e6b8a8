/**
 * What a mock method is: a function from params to the `result` as JSON text, plus an optional
 * builder of a realistic oversized result for `responseBytes`.
 */
import type { ChainView } from './chain-clock.js';
import type { TransactionChain } from './mempool.js';
import type { MockRpcError } from './types.js';

/** What handlers read besides their params. */
export interface MethodContext {
  readonly chain: ChainView;
  /** Admits a submitted transaction to the node's mempool; false when it is already known. */
  readonly admit: (chain: TransactionChain, id: string) => boolean;
  /** The node's answer to a resubmission (its client's "already known" / "already processed"). */
  readonly alreadyKnown: (chain: TransactionChain) => MockRpcError;
  /**
   * Where a submitted transaction stands on the chain the node follows: `pending` until it
   * lands, then its slot; undefined for one the chain never saw (answered as long finalized).
   */
  readonly transactionStatus?: (chain: TransactionChain, id: string) => TransactionStatus;
  /** An account the chain changed on demand (MockChain.setAccount), else undefined. */
  readonly account?: (pubkey: string) => MockAccount | undefined;
  /** True while the node follows another chain (behaviour `otherChain`): its identity differs. */
  readonly otherChain?: () => boolean;
}

/** A submitted transaction: still pending, landed in a slot, or unknown. */
export type TransactionStatus = 'pending' | { readonly slot: number } | undefined;

/** An account's state as the mock chain holds it. */
export interface MockAccount {
  readonly lamports: number;
  readonly data: Uint8Array;
  readonly owner: string;
}

/** One JSON-RPC method of the mock. */
export interface MethodSpec {
  /** The `result` value as JSON text. */
  readonly result: (params: unknown, ctx: MethodContext) => string;
  /**
   * A result of about `bytes` bytes with the natural shape (more accounts, longer data…).
   * Called once per size and cached, so params and time are read only then.
   */
  readonly padded?: (bytes: number, params: unknown, ctx: MethodContext) => string;
}

/** Method name → spec. */
export type MethodTable = ReadonlyMap<string, MethodSpec>;

/** Thrown by a handler for bad params; answered as -32602. */
export class InvalidParamsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidParamsError';
  }
}

/** True for a non-null, non-array object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Positional param `i`, or undefined. */
export function paramAt(params: unknown, i: number): unknown {
  return Array.isArray(params) ? (params[i] as unknown) : undefined;
}

/** The config object at position `i` (Solana style), or an empty one. */
export function configAt(params: unknown, i: number): Record<string, unknown> {
  const value = paramAt(params, i);
  return isRecord(value) ? value : {};
}

/** Required string param `i` (a pubkey, a signature, an address). */
export function stringAt(params: unknown, i: number, what: string): string {
  const value = paramAt(params, i);
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidParamsError(`Invalid params: expected ${what} at position ${i}`);
  }
  return value;
}

/** Optional integer param `i` (a number or a `0x` quantity), else `fallback`. */
export function integerAt(params: unknown, i: number, fallback: number): number {
  const value = paramAt(params, i);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value))
    return Number.parseInt(value, 16);
  return fallback;
}
