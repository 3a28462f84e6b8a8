/**
 * JSON-RPC errors an agave (Solana) RPC node answers with, spelled as in anza-xyz/agave:
 * codes, messages and `data` from rpc-client-api/src/custom_error.rs, the preflight failure
 * from rpc/src/rpc.rs (send_transaction), whose `data` is an RpcSimulateTransactionResult
 * (rpc-client-types/src/response.rs) serialised by serde: camelCase, every field present, in
 * declaration order. Transaction errors print as solana-transaction-error's Display.
 */
import type { NodeErrorPreset } from './node-error-preset.js';
import type { MockRpcError } from './types.js';

const PREFLIGHT_FAILURE = -32002;
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const DEFAULT_SLOT = 300_000_000;

interface Simulation {
  readonly err: unknown;
  readonly logs: readonly string[];
  readonly unitsConsumed: number;
  readonly loadedAccountsDataSize: number;
  readonly fee: number | null;
}

/** The `data` of a -32002 preflight failure: what send_transaction puts in its result. */
function preflightData(simulation: Simulation): Record<string, unknown> {
  return {
    err: simulation.err,
    logs: simulation.logs,
    accounts: null,
    unitsConsumed: simulation.unitsConsumed,
    loadedAccountsDataSize: simulation.loadedAccountsDataSize,
    returnData: null,
    innerInstructions: null,
    replacementBlockhash: null,
    fee: simulation.fee,
    preBalances: null,
    postBalances: null,
    preTokenBalances: null,
    postTokenBalances: null,
    loadedAddresses: null,
  };
}

/** A transaction the bank refused before running it (no logs, nothing consumed, no fee). */
function refusedBeforeExecution(display: string, err: string): MockRpcError {
  return {
    code: PREFLIGHT_FAILURE,
    message: `Transaction simulation failed: ${display}`,
    data: preflightData({ err, logs: [], unitsConsumed: 0, loadedAccountsDataSize: 0, fee: null }),
  };
}

/** An SPL Token transfer failing in its program with custom error `code` (0x1: insufficient funds). */
function customProgramError(code: number): MockRpcError {
  const hex = `0x${code.toString(16)}`;
  return {
    code: PREFLIGHT_FAILURE,
    message: `Transaction simulation failed: Error processing Instruction 0: custom program error: ${hex}`,
    data: preflightData({
      err: { InstructionError: [0, { Custom: code }] },
      logs: [
        `Program ${TOKEN_PROGRAM} invoke [1]`,
        'Program log: Instruction: Transfer',
        'Program log: Error: insufficient funds',
        `Program ${TOKEN_PROGRAM} consumed 4381 of 200000 compute units`,
        `Program ${TOKEN_PROGRAM} failed: custom program error: ${hex}`,
      ],
      unitsConsumed: 4381,
      loadedAccountsDataSize: 1_403_416,
      fee: 5000,
    }),
  };
}

const slot = (summary: string, build: (slot: string) => MockRpcError): NodeErrorPreset => ({
  summary,
  param: { name: 'slot', kind: 'integer', fallback: DEFAULT_SLOT },
  build,
});

/** The answer to a resubmitted transaction that has landed (TransactionError::AlreadyProcessed). */
export const ALREADY_PROCESSED: MockRpcError = refusedBeforeExecution(
  'This transaction has already been processed',
  'AlreadyProcessed',
);

/** Solana presets by name. */
export const SOLANA_ERROR_PRESETS: Readonly<Record<string, NodeErrorPreset>> = {
  'solana.custom_program_error': {
    summary: 'sendTransaction preflight: -32002 "… custom program error: 0xN" with logs',
    param: { name: 'code', kind: 'integer', fallback: 1 },
    build: (code) => customProgramError(Number(code)),
  },
  'solana.already_processed': {
    summary: 'sendTransaction resubmitted: -32002 "… This transaction has already been processed"',
    build: () => ALREADY_PROCESSED,
  },
  'solana.blockhash_not_found': {
    summary:
      'sendTransaction preflight: -32002 "Transaction simulation failed: Blockhash not found"',
    build: () => refusedBeforeExecution('Blockhash not found', 'BlockhashNotFound'),
  },
  'solana.signature_verification': {
    summary: '-32003 "Transaction signature verification failure"',
    build: () => ({ code: -32003, message: 'Transaction signature verification failure' }),
  },
  'solana.block_not_available': slot('-32004 "Block not available for slot N"', (n) => ({
    code: -32004,
    message: `Block not available for slot ${n}`,
  })),
  'solana.node_behind': {
    summary: '-32005 "Node is behind by N slots", data {numSlotsBehind}',
    param: { name: 'slots', kind: 'integer', fallback: 42 },
    build: (n) => ({
      code: -32005,
      message: `Node is behind by ${n} slots`,
      data: { numSlotsBehind: Number(n) },
    }),
  },
  'solana.node_unhealthy': {
    summary: '-32005 "Node is unhealthy", data {numSlotsBehind: null}',
    build: () => ({ code: -32005, message: 'Node is unhealthy', data: { numSlotsBehind: null } }),
  },
  'solana.slot_skipped': slot(
    '-32007 "Slot N was skipped, or missing due to ledger jump to recent snapshot"',
    (n) => ({
      code: -32007,
      message: `Slot ${n} was skipped, or missing due to ledger jump to recent snapshot`,
    }),
  ),
  'solana.long_term_storage_slot_skipped': slot(
    '-32009 "Slot N was skipped, or missing in long-term storage"',
    (n) => ({ code: -32009, message: `Slot ${n} was skipped, or missing in long-term storage` }),
  ),
  'solana.block_status_not_available_yet': slot(
    '-32014 "Block status not yet available for slot N"',
    (n) => ({ code: -32014, message: `Block status not yet available for slot ${n}` }),
  ),
  'solana.min_context_slot': slot(
    '-32016 "Minimum context slot has not been reached", data {contextSlot}',
    (n) => ({
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: Number(n) },
    }),
  ),
};
