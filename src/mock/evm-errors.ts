/**
 * JSON-RPC errors EVM clients answer with, spelled as in their source. geth's RPC layer answers
 * any plain Go error with code -32000 (rpc/errors.go: errcodeDefault) and the error's text; an
 * error carrying ErrorCode()/ErrorData() sets its own code and `data`.
 */
import type { NodeErrorPreset } from './node-error-preset.js';
import type { EvmClient, MockRpcError } from './types.js';

/** Error(string)'s selector: the first 4 bytes of keccak256("Error(string)"). */
const ERROR_STRING_SELECTOR = '08c379a0';
const SERVER_ERROR = -32000;

function word(value: number): string {
  return value.toString(16).padStart(64, '0');
}

/** The ABI encoding of `Error(reason)`, the revert data Solidity's require/revert produce. */
export function revertData(reason: string): string {
  const bytes = Buffer.from(reason, 'utf8');
  const padded = Math.ceil(bytes.length / 32) * 64;
  return `0x${ERROR_STRING_SELECTOR}${word(32)}${word(bytes.length)}${bytes.toString('hex').padEnd(padded, '0')}`;
}

const fixed = (summary: string, error: MockRpcError): NodeErrorPreset => ({
  summary,
  build: () => error,
});

const DEFAULT_REASON = 'ERC20: transfer amount exceeds balance';
const SENDER = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

/** Each client's answer to a transaction its pool already holds. */
export const ALREADY_KNOWN: Readonly<Record<EvmClient, MockRpcError>> = {
  // go-ethereum core/txpool/errors.go: ErrAlreadyKnown = errors.New("already known").
  geth: { code: SERVER_ERROR, message: 'already known' },
  // NethermindEth/nethermind Nethermind.TxPool/AcceptTxResult.cs (AlreadyKnown, code = its name)
  // returned by Modules/Eth/EthRpcModule.cs SendTx with ErrorCodes.TransactionRejected (-32010).
  // Releases from 2026 spell it "already known" (TxPoolErrorMessages.cs).
  nethermind: { code: -32010, message: 'AlreadyKnown' },
  // hyperledger/besu RpcErrorType.java: ETH_SEND_TX_ALREADY_KNOWN(-32000, "Known transaction").
  besu: { code: SERVER_ERROR, message: 'Known transaction' },
  // erigontech/erigon rpc/jsonrpc/send_transaction.go: "%s: %s" of the pool's ImportResult name
  // (ALREADY_EXISTS) and txpoolcfg.AlreadyKnown.String() ("already known").
  erigon: { code: SERVER_ERROR, message: 'ALREADY_EXISTS: already known' },
  // paradigmxyz/reth crates/rpc/rpc-eth-types/src/error/mod.rs: PoolErrorKind::AlreadyImported
  // → RpcPoolError::AlreadyKnown ("already known") → internal_rpc_err (-32603).
  reth: { code: -32603, message: 'already known' },
  // foundry-rs/foundry crates/anvil/src/eth/error.rs: PoolError::AlreadyImported →
  // RpcError::transaction_rejected (-32003) "transaction already imported".
  anvil: { code: -32003, message: 'transaction already imported' },
};

/** EVM presets by name. */
export const EVM_ERROR_PRESETS: Readonly<Record<string, NodeErrorPreset>> = {
  // go-ethereum internal/ethapi/errors.go newRevertError (ErrorCode 3, ErrorData = hex revert
  // data, message "execution reverted: <reason>"), used by Call and EstimateGas in api.go.
  'geth.revert': {
    summary:
      'eth_call / eth_estimateGas revert: code 3, "execution reverted: REASON", Error(string) data',
    param: { name: 'reason', kind: 'text', fallback: DEFAULT_REASON },
    build: (reason) => ({
      code: 3,
      message: `execution reverted: ${reason}`,
      data: revertData(reason),
    }),
  },
  // go-ethereum before v1.15.10 (commit b0b2b76509, internal/ethapi/api.go) returned the bare
  // vm.ErrExecutionReverted (core/vm/errors.go) when the revert carried no data.
  'geth.revert_plain': fixed(
    'a revert without data (geth < 1.15.10): -32000 "execution reverted"',
    {
      code: SERVER_ERROR,
      message: 'execution reverted',
    },
  ),
  // go-ethereum core/txpool/validation.go: "%w: balance %v, tx cost %v, overshot %v".
  'geth.insufficient_funds': fixed(
    'eth_sendRawTransaction: "insufficient funds for gas * price + value: …"',
    {
      code: SERVER_ERROR,
      message:
        'insufficient funds for gas * price + value: balance 1000000000000000, tx cost 1021000000000000, overshot 21000000000000',
    },
  ),
  // go-ethereum core/txpool/validation.go: "%w: next nonce %v, tx nonce %v".
  'geth.nonce_too_low': {
    summary: 'eth_sendRawTransaction: "nonce too low: next nonce N+1, tx nonce N"',
    param: { name: 'nonce', kind: 'integer', fallback: 41 },
    build: (nonce) => ({
      code: SERVER_ERROR,
      message: `nonce too low: next nonce ${Number(nonce) + 1}, tx nonce ${nonce}`,
    }),
  },
  // go-ethereum core/txpool/errors.go ErrReplaceUnderpriced (legacypool.go returns it bare).
  'geth.replacement_underpriced': fixed(
    'eth_sendRawTransaction: "replacement transaction underpriced"',
    {
      code: SERVER_ERROR,
      message: 'replacement transaction underpriced',
    },
  ),
  // go-ethereum core/txpool/validation.go: "%w: gas %v, minimum needed %v".
  'geth.intrinsic_gas': {
    summary: 'eth_sendRawTransaction: "intrinsic gas too low: gas GAS, minimum needed 21000"',
    param: { name: 'gas', kind: 'integer', fallback: 20_000 },
    build: (gas) => ({
      code: SERVER_ERROR,
      message: `intrinsic gas too low: gas ${gas}, minimum needed 21000`,
    }),
  },
  // go-ethereum core/state_transition.go: "%w: address %v, maxFeePerGas: %s, baseFee: %s".
  'geth.fee_cap_too_low': fixed(
    'eth_call / eth_estimateGas: "max fee per gas less than block base fee: …"',
    {
      code: SERVER_ERROR,
      message: `max fee per gas less than block base fee: address ${SENDER}, maxFeePerGas: 1000000000, baseFee: 12000000000`,
    },
  ),
  'geth.already_known': fixed(
    'eth_sendRawTransaction resubmitted: -32000 "already known"',
    ALREADY_KNOWN.geth,
  ),
  'nethermind.already_known': fixed('-32010 "AlreadyKnown"', ALREADY_KNOWN.nethermind),
  'besu.already_known': fixed('-32000 "Known transaction"', ALREADY_KNOWN.besu),
  'erigon.already_known': fixed('-32000 "ALREADY_EXISTS: already known"', ALREADY_KNOWN.erigon),
  'reth.already_known': fixed('-32603 "already known"', ALREADY_KNOWN.reth),
  'anvil.already_known': fixed('-32003 "transaction already imported"', ALREADY_KNOWN.anvil),
  // go-ethereum eth/api_backend.go (and eth/filters, internal/ethapi/simulate.go): a block the
  // node does not have (yet).
  'geth.header_not_found': fixed('a block the node does not have: -32000 "header not found"', {
    code: SERVER_ERROR,
    message: 'header not found',
  }),
  // go-ethereum trie/errors.go MissingNodeError: "missing trie node %x (path %x) %v" (pruned state).
  'geth.missing_trie_node': {
    summary: 'pruned state: -32000 "missing trie node HASH (path ) <nil>"',
    param: {
      name: 'hash',
      kind: 'text',
      fallback: 'a7f3c1d2e4b5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff',
    },
    build: (hash) => ({ code: SERVER_ERROR, message: `missing trie node ${hash} (path ) <nil>` }),
  },
  // go-ethereum eth/gasprice/feehistory.go: "%w: requested %d, head %d" (errRequestBeyondHead).
  'geth.beyond_head': {
    summary: 'eth_feeHistory past the head: "request beyond head block: requested N, head N-2"',
    param: { name: 'block', kind: 'integer', fallback: 21_000_002 },
    build: (block) => ({
      code: SERVER_ERROR,
      message: `request beyond head block: requested ${block}, head ${Number(block) - 2}`,
    }),
  },
  // NomicFoundation/hardhat hardhat-network/jsonrpc/handler.ts _handleError: a non-provider
  // error becomes InternalError(error) (-32603, message String(error), hence "Error: "), and
  // data = { message, data: the revert data }.
  'hardhat.revert': {
    summary:
      'hardhat node: -32603 "Error: VM Exception while processing transaction: reverted with reason string \'REASON\'"',
    param: { name: 'reason', kind: 'text', fallback: DEFAULT_REASON },
    build: (reason) => {
      const message = `Error: VM Exception while processing transaction: reverted with reason string '${reason}'`;
      return { code: -32603, message, data: { message, data: revertData(reason) } };
    },
  },
};
