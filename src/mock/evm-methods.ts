/**
 * Ethereum JSON-RPC methods (mainnet-shaped, chain id 1) for viem, ethers and raw clients.
 * The head block moves with the shared chain clock.
 */
import { evmTransactionHash } from '../core/protocol/transaction-id.js';
import { toQuantity } from './encoding.js';
import {
  BASE_FEE_WEI,
  CHAIN_ID,
  LOG_ENTRY_BYTES,
  PRIORITY_FEE_WEI,
  blockJson,
  logJson,
  logsJson,
  receiptJson,
  transactionJson,
} from './evm-objects.js';
import { matchesLogFilter } from './ws/notification-json.js';
import {
  InvalidParamsError,
  isRecord,
  integerAt,
  paramAt,
  stringAt,
  type MethodContext,
  type MethodSpec,
} from './method-spec.js';
import { NodeErrorAnswer } from './node-errors.js';

const ONE_ETHER = '"0xde0b6b3a7640000"';
const CALL_RESULT = `"0x${(10n ** 18n).toString(16).padStart(64, '0')}"`;
/** A small contract's runtime code (enough for "is this a contract" checks). */
const CODE =
  '"0x6080604052348015600f57600080fd5b506004361060285760003560e01c8063a9059cbb14602d575b600080fd5b00"';
const FINALIZED_DEPTH = 64;
const SAFE_DEPTH = 32;
const MAX_FEE_HISTORY_BLOCKS = 1024;

const constant = (json: string): MethodSpec => ({ result: () => json });
/** Goerli's id for a node on another chain (behaviour `otherChain`), mainnet's otherwise. */
const chainIdOf = (ctx: MethodContext): number => (ctx.otherChain?.() === true ? 5 : CHAIN_ID);
const forAddress = (json: string): MethodSpec => ({
  result: (params) => {
    stringAt(params, 0, 'address');
    return json;
  },
});

/** Block number for a tag or quantity; undefined when it is beyond the head. */
function resolveBlock(tag: unknown, ctx: MethodContext): number | undefined {
  const head = ctx.chain.blockNumber();
  if (tag === undefined || tag === 'latest' || tag === 'pending') return head;
  if (tag === 'safe') return head - SAFE_DEPTH;
  if (tag === 'finalized') return head - FINALIZED_DEPTH;
  if (tag === 'earliest') return 0;
  if (typeof tag === 'string' && /^0x[0-9a-fA-F]{1,16}$/.test(tag)) {
    const n = Number.parseInt(tag, 16);
    return n <= head ? n : undefined;
  }
  throw new InvalidParamsError('invalid argument 0: hex string without 0x prefix');
}

function blockByNumber(params: unknown, ctx: MethodContext): string {
  const n = resolveBlock(paramAt(params, 0), ctx);
  if (n === undefined) return 'null';
  return blockJson(n, ctx.chain.blockTime(n), paramAt(params, 1) === true);
}

function blockByHash(params: unknown, ctx: MethodContext): string {
  const hash = stringAt(params, 0, 'block hash');
  // Any hash is "found", a few blocks behind the head; the block reports its own hash.
  const n = ctx.chain.blockNumber() - 3;
  return blockJson(n, ctx.chain.blockTime(n), paramAt(params, 1) === true, hash.toLowerCase());
}

function feeHistory(params: unknown, ctx: MethodContext): string {
  const count = Math.max(1, Math.min(integerAt(params, 0, 1), MAX_FEE_HISTORY_BLOCKS));
  const newest = resolveBlock(paramAt(params, 1), ctx) ?? ctx.chain.blockNumber();
  const percentiles = paramAt(params, 2);
  const baseFees = new Array<string>(count + 1).fill(`"${toQuantity(BASE_FEE_WEI)}"`);
  const ratios = new Array<string>(count).fill('0.5');
  let reward = '';
  if (Array.isArray(percentiles)) {
    const row = `[${percentiles.map((_p, i) => `"${toQuantity(PRIORITY_FEE_WEI * (i + 1))}"`).join(',')}]`;
    reward = `,"reward":[${new Array<string>(count).fill(row).join(',')}]`;
  }
  return (
    `{"baseFeePerGas":[${baseFees.join(',')}],"gasUsedRatio":[${ratios.join(',')}],` +
    `"oldestBlock":"${toQuantity(newest - count + 1)}"${reward}}`
  );
}

/** What geth's hexutil.Bytes says about text that is not 0x-prefixed, even-length hex. */
function hexProblem(raw: string): string {
  if (!/^0[xX]/.test(raw)) return 'hex string without 0x prefix';
  return raw.length % 2 === 0 ? 'invalid hex string' : 'hex string of odd length';
}

/**
 * Answers the transaction's real hash (keccak-256 of the raw bytes) and admits it to the
 * mempool; a resubmission gets the node's client's "already known". The bytes are not decoded
 * as RLP: any hex is taken as a transaction, which is all clients and the proxy need.
 */
function sendRawTransaction(params: unknown, ctx: MethodContext): string {
  const raw = stringAt(params, 0, 'signed transaction');
  if (raw === '0x' || raw === '0X') {
    // geth core/types/transaction.go errShortTypedTx, answered with the default code.
    throw new NodeErrorAnswer({ code: -32000, message: 'typed transaction too short' });
  }
  const hash = evmTransactionHash(raw);
  if (hash === undefined) {
    // geth rpc/json.go "invalid argument %d: %v" around hexutil's json.UnmarshalTypeError.
    throw new InvalidParamsError(
      `invalid argument 0: json: cannot unmarshal ${hexProblem(raw)} into Go value of type hexutil.Bytes`,
    );
  }
  if (!ctx.admit('evm', hash)) throw new NodeErrorAnswer(ctx.alreadyKnown('evm'));
  return `"${hash}"`;
}

/** Most blocks one ranged eth_getLogs covers (geth's default range cap is far larger). */
const MAX_LOG_RANGE = 10_000;

/**
 * eth_getLogs over an explicit fromBlock/toBlock: the one USDC Transfer log of each block in
 * the range (the log the mock's WebSocket `logs` subscriptions announce for that block), so
 * a back-fill over a range returns exactly what a subscriber would have been sent.
 */
function rangeLogs(params: unknown, ctx: MethodContext): string | undefined {
  const filter = paramAt(params, 0);
  if (!isRecord(filter) || (filter.fromBlock === undefined && filter.toBlock === undefined))
    return undefined;
  if (filter.blockHash !== undefined) return undefined;
  const head = ctx.chain.blockNumber();
  const from = resolveBlock(filter.fromBlock ?? 'latest', ctx) ?? head + 1;
  const to = Math.min(resolveBlock(filter.toBlock ?? 'latest', ctx) ?? head, head);
  if (to - from + 1 > MAX_LOG_RANGE) {
    throw new NodeErrorAnswer({
      code: -32005,
      message: `query exceeds max block range ${MAX_LOG_RANGE}`,
    });
  }
  const logs: string[] = [];
  if (matchesLogFilter(filter)) for (let n = from; n <= to; n++) logs.push(logJson(n, 0, 0));
  return `[${logs.join(',')}]`;
}

/** EVM method name → spec. */
export const EVM_METHOD_SPECS: ReadonlyArray<readonly [string, MethodSpec]> = [
  ['eth_chainId', { result: (_p, ctx) => `"${toQuantity(chainIdOf(ctx))}"` }],
  ['net_version', { result: (_p, ctx) => `"${chainIdOf(ctx)}"` }],
  ['net_listening', constant('true')],
  ['net_peerCount', constant('"0x32"')],
  ['eth_syncing', constant('false')],
  ['web3_clientVersion', constant('"Geth/v1.14.12-stable-293a300d/linux-amd64/go1.23.4"')],
  ['eth_blockNumber', { result: (_p, ctx) => `"${toQuantity(ctx.chain.blockNumber())}"` }],
  ['eth_gasPrice', constant(`"${toQuantity(BASE_FEE_WEI + PRIORITY_FEE_WEI)}"`)],
  ['eth_maxPriorityFeePerGas', constant(`"${toQuantity(PRIORITY_FEE_WEI)}"`)],
  ['eth_blobBaseFee', constant('"0x1"')],
  ['eth_estimateGas', constant('"0x5208"')],
  ['eth_getBalance', forAddress(ONE_ETHER)],
  ['eth_getTransactionCount', forAddress('"0x2a"')],
  ['eth_getCode', forAddress(CODE)],
  ['eth_getStorageAt', constant(`"0x${'0'.repeat(64)}"`)],
  [
    'eth_call',
    {
      result: () => CALL_RESULT,
      padded: (bytes) => `"0x${'ab'.repeat(Math.max(32, Math.floor(bytes / 2) - 2))}"`,
    },
  ],
  ['eth_getBlockByNumber', { result: blockByNumber }],
  ['eth_getBlockByHash', { result: blockByHash }],
  [
    'eth_getBlockTransactionCountByNumber',
    {
      result: (params, ctx) =>
        resolveBlock(paramAt(params, 0), ctx) === undefined ? 'null' : '"0x3"',
    },
  ],
  [
    'eth_getTransactionByHash',
    {
      result: (params, ctx) => {
        const hash = stringAt(params, 0, 'transaction hash').toLowerCase();
        return transactionJson(ctx.chain.blockNumber() - 2, 0, hash);
      },
    },
  ],
  [
    'eth_getTransactionReceipt',
    {
      result: (params, ctx) =>
        receiptJson(
          stringAt(params, 0, 'transaction hash').toLowerCase(),
          ctx.chain.blockNumber() - 2,
        ),
    },
  ],
  [
    'eth_getLogs',
    {
      result: (params, ctx) => rangeLogs(params, ctx) ?? logsJson(ctx.chain.blockNumber(), 3),
      padded: (bytes, _p, ctx) =>
        logsJson(ctx.chain.blockNumber(), Math.ceil(bytes / LOG_ENTRY_BYTES)),
    },
  ],
  ['eth_feeHistory', { result: feeHistory }],
  ['eth_sendRawTransaction', { result: sendRawTransaction }],
];
