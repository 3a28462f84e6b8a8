/**
 * Whether an upstream answer may be stored, by the method's rule (docs in the README's cache
 * table). Never: errors, `null` results (a receipt not mined yet may appear later), answers
 * that are not a plain JSON-RPC success, and `final` answers that cannot prove finality.
 */
import type { FinalityCheck } from '../protocol/method-cache-rules.js';
import { safeQuantity } from '../protocol/quantity.js';

/** Reads `0x…` quantities (any spelling a node reads); undefined for anything else (or beyond 2^53). */
export const quantity = safeQuantity;

/** The commitment a Solana request asks at: its config object's, else the RPC default. */
function solanaCommitment(params: unknown): unknown {
  if (!Array.isArray(params)) return 'finalized';
  for (const item of params.slice(1)) {
    if (typeof item === 'object' && item !== null && 'commitment' in item) {
      return (item as { commitment: unknown }).commitment;
    }
  }
  return 'finalized';
}

function blockOfResult(result: unknown): number | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const object = result as { blockNumber?: unknown; number?: unknown };
  return quantity(object.blockNumber ?? object.number);
}

/** An eth_getLogs filter over numbered blocks, all at or below the finalized `head`. */
function logsRangeFinal(params: unknown, head: number): boolean {
  const filter: unknown = Array.isArray(params) ? params[0] : undefined;
  if (typeof filter !== 'object' || filter === null) return false;
  const { fromBlock, toBlock } = filter as { fromBlock?: unknown; toBlock?: unknown };
  const from = quantity(fromBlock);
  const to = quantity(toBlock);
  return from !== undefined && to !== undefined && from <= to && to <= head;
}

/**
 * Whether a non-null `result` of a `final` rule is final. `params` is the parsed canonical
 * params (undefined when the request had none).
 */
export function isFinal(
  check: FinalityCheck,
  params: unknown,
  result: unknown,
  /** The finalized EVM block the chain tracker knows (chain/chain-state.ts), or undefined. */
  head: number | undefined,
): boolean {
  if (check === 'solana_commitment') return solanaCommitment(params) === 'finalized';
  if (head === undefined) return false;
  if (check === 'evm_logs_range') return logsRangeFinal(params, head);
  const block =
    check === 'evm_result_block'
      ? blockOfResult(result)
      : quantity(Array.isArray(params) ? (params[0] as unknown) : undefined);
  return block !== undefined && block <= head;
}
