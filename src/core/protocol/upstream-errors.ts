/**
 * Whose fault a JSON-RPC error answer is, from its code and message (docs/routing.md, "Whose
 * fault"). One table for every client cascade fronts — geth, erigon, nethermind, besu, reth,
 * hardhat/anvil (EVM) and agave (Solana) — read top to bottom, first match wins:
 *
 * - `request`: any healthy node would answer the same (a revert, a failed simulation, a bad
 *   nonce, a bad signature). Relayed to the client as it came; no retry, no penalty.
 * - `node_state`: this node lacks the data right now (behind the head, pruned, a slot it never
 *   stored). Another node may have it: retry elsewhere, no penalty — the node serves other
 *   requests fine, and taking it out of rotation for one request's data would hurt everyone.
 * - `node_unhealthy`: the node says it is unhealthy or behind. Retry elsewhere and penalize.
 * - `rate_limited`: the provider throttles us. Retry elsewhere and penalize.
 * - `unknown`: nothing known; settled by agreement (a second node giving the same error makes
 *   it the request's).
 *
 * Codes alone are ambiguous across chains (besu's -32004 is "upfront cost exceeds balance",
 * agave's is "block not available"), so rules match the message wherever clients share codes.
 */
import { ALREADY_KNOWN_ANSWERS } from './already-known.js';

/** Whose fault a JSON-RPC error is. */
export type ErrorFault = 'request' | 'node_state' | 'node_unhealthy' | 'rate_limited' | 'unknown';

/** One row of the table. */
export interface ErrorRule {
  /** Codes the row applies to; undefined = any code. */
  readonly codes?: readonly number[];
  /** Message pattern; undefined = any message. */
  readonly message?: RegExp;
  readonly fault: Exclude<ErrorFault, 'unknown'>;
  /** Which clients answer this (documentation and tests). */
  readonly clients: string;
  /** A real answer this row matches (tests run every example through the proxy). */
  readonly example: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** A row with one message pattern. */
function row(
  fault: ErrorRule['fault'],
  clients: string,
  message: RegExp | undefined,
  example: ErrorRule['example'],
  codes?: readonly number[],
): ErrorRule {
  return { fault, clients, message, example, codes };
}

const REVERT_DATA =
  '0x08c379a0' +
  '0000000000000000000000000000000000000000000000000000000000000020' +
  '0000000000000000000000000000000000000000000000000000000000000026' +
  '45524332303a207472616e7366657220616d6f756e7420657863656564732062' +
  '616c616e63650000000000000000000000000000000000000000000000000000';

/** The table, in match order. */
export const ERROR_RULES: readonly ErrorRule[] = [
  // ---- throttling: whatever the code, a provider telling us to slow down ----
  row(
    'rate_limited',
    'Alchemy (code 429 in the body)',
    undefined,
    { code: 429, message: 'Your app has exceeded its compute units per second capacity' },
    [429],
  ),
  row(
    'rate_limited',
    'providers (Infura, QuickNode, Helius…)',
    /rate.?limit|rate exceeded|too many requests|request limit reached|limit exceeded|exceeded .*(rate|limit|quota|capacity)|throttl/i,
    { code: -32005, message: 'Too many requests for a specific RPC call' },
  ),
  // ---- node state: this node lacks the data now; another may have it ----
  row(
    'node_state',
    'agave (a node behind the cluster does not know a recent blockhash)',
    /blockhash not found/i,
    { code: -32002, message: 'Transaction simulation failed: Blockhash not found' },
  ),
  row('node_state', 'geth, erigon, reth', /^header not found/i, {
    code: -32000,
    message: 'header not found',
  }),
  row('node_state', 'geth, erigon (pruned state)', /^missing trie node/i, {
    code: -32000,
    message: 'missing trie node 5a4c…ab (path ) state 0x5a4c… is not available',
  }),
  row('node_state', 'geth', /^request beyond head block/i, {
    code: -32000,
    message: 'request beyond head block: requested 21000000, head 20999990',
  }),
  row(
    'node_state',
    'geth, reth, nethermind, besu',
    /^(unknown block|block not found|historical state .* is not available|required historical state unavailable|state (is )?not available)/i,
    { code: -32000, message: 'historical state 0x8f1a… is not available' },
  ),
  row(
    'node_state',
    'agave',
    /^Block \d+ cleaned up/i,
    {
      code: -32001,
      message: 'Block 100 cleaned up, does not exist on node. First available block: 250000000',
    },
    [-32001],
  ),
  row(
    'node_state',
    'agave',
    /^Block not available for slot/i,
    { code: -32004, message: 'Block not available for slot 312345678' },
    [-32004],
  ),
  row(
    'node_unhealthy',
    'agave',
    /^Node is (unhealthy|behind)/i,
    { code: -32005, message: 'Node is behind by 42 slots', data: { numSlotsBehind: 42 } },
    [-32005],
  ),
  row(
    'node_state',
    'agave',
    /^Slot \d+ was skipped, or missing due to ledger jump/i,
    {
      code: -32007,
      message: 'Slot 312345678 was skipped, or missing due to ledger jump to recent snapshot',
    },
    [-32007],
  ),
  row('node_state', 'agave', /^No snapshot/i, { code: -32008, message: 'No snapshot' }, [-32008]),
  row(
    'node_state',
    'agave',
    /^Slot \d+ was skipped, or missing in long-term storage/i,
    { code: -32009, message: 'Slot 100 was skipped, or missing in long-term storage' },
    [-32009],
  ),
  row(
    'node_state',
    'agave (node without that secondary index)',
    /excluded from account secondary indexes/i,
    {
      code: -32010,
      message:
        'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA excluded from account secondary indexes; this RPC method unavailable for key',
    },
    [-32010],
  ),
  row(
    'node_state',
    'agave',
    /^Transaction history is not available/i,
    { code: -32011, message: 'Transaction history is not available from this node' },
    [-32011],
  ),
  row(
    'node_state',
    'agave',
    /^Block status not yet available|^BlockStatusNotAvailableYet/i,
    { code: -32014, message: 'Block status not yet available for slot 312345678' },
    [-32014],
  ),
  row(
    'node_state',
    'agave',
    /^Minimum context slot has not been reached/i,
    {
      code: -32016,
      message: 'Minimum context slot has not been reached',
      data: { contextSlot: 312345600 },
    },
    [-32016],
  ),
  row(
    'node_state',
    'agave',
    /^Failed to query long-term storage/i,
    { code: -32019, message: 'Failed to query long-term storage; please try again' },
    [-32019],
  ),
  // ---- the request's own fault: reverts, failed simulations, rejected transactions ----
  // A transaction the node already has: the request's answer (the write path may turn it into
  // a success, see already-known.ts). Before the generic rows that would otherwise take them.
  ...ALREADY_KNOWN_ANSWERS.map((answer) =>
    row('request', answer.clients, answer.message, answer.example),
  ),
  row(
    'request',
    'geth, erigon, reth, nethermind, anvil (reverted, revert data attached)',
    undefined,
    {
      code: 3,
      message: 'execution reverted: ERC20: transfer amount exceeds balance',
      data: REVERT_DATA,
    },
    [3],
  ),
  row(
    'request',
    'agave (preflight simulation failed)',
    undefined,
    {
      code: -32002,
      message:
        'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
      data: {
        err: { InstructionError: [0, { Custom: 1 }] },
        logs: ['Program log: Error: insufficient funds'],
      },
    },
    [-32002],
  ),
  row(
    'request',
    'agave',
    /signature verification failure/i,
    { code: -32003, message: 'Transaction signature verification failure' },
    [-32003],
  ),
  row(
    'request',
    'agave',
    /precompile verification failure/i,
    { code: -32006, message: 'Transaction precompile verification failure InvalidAccountIndex' },
    [-32006],
  ),
  row(
    'request',
    'agave',
    /signature length mismatch/i,
    { code: -32013, message: 'Transaction signature length mismatch' },
    [-32013],
  ),
  row(
    'request',
    'agave',
    /^Transaction version .* is not supported/i,
    {
      code: -32015,
      message:
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    },
    [-32015],
  ),
  row(
    'request',
    'geth, erigon, reth, besu (eth_call / eth_estimateGas)',
    /^execution reverted|^Execution reverted/,
    { code: -32000, message: 'execution reverted' },
  ),
  row('request', 'hardhat, ganache', /^(Error: )?VM Exception while processing transaction/i, {
    code: -32603,
    message:
      "VM Exception while processing transaction: reverted with reason string 'Ownable: caller is not the owner'",
  }),
  row(
    'request',
    'geth, erigon, reth (EVM execution)',
    /^(out of gas|invalid opcode|stack (underflow|overflow|limit reached)|invalid jump destination|write protection|contract creation code storage out of gas|max code size exceeded|invalid code: must not begin with 0xef)/i,
    { code: -32000, message: 'invalid opcode: INVALID' },
  ),
  row('request', 'geth, erigon, reth (eth_estimateGas)', /^gas required exceeds allowance/, {
    code: -32000,
    message: 'gas required exceeds allowance (30000000)',
  }),
  row('request', 'geth, erigon, reth, anvil', /^nonce too (low|high)/, {
    code: -32000,
    message: 'nonce too low: next nonce 5, tx nonce 3',
  }),
  row('request', 'geth, erigon, reth, anvil', /^insufficient funds/, {
    code: -32000,
    message: 'insufficient funds for gas * price + value: balance 0, tx cost 21000000000000',
  }),
  row('request', 'geth, erigon, reth', /^(replacement )?transaction underpriced/, {
    code: -32000,
    message: 'replacement transaction underpriced',
  }),
  row('request', 'geth, erigon, reth, anvil', /^intrinsic gas too low/, {
    code: -32000,
    message: 'intrinsic gas too low: gas 20000, minimum needed 21000',
  }),
  row('request', 'geth, erigon, reth', /^max fee per gas less than block base fee/, {
    code: -32000,
    message: 'max fee per gas less than block base fee: address 0x…, maxFeePerGas: 1 baseFee: 7',
  }),
  row(
    'request',
    'geth, erigon, reth',
    /^(max priority fee per gas higher than max fee per gas|exceeds block gas limit|oversized data|invalid sender|negative value|transaction type not supported|gas uint64 overflow|max initcode size exceeded|sender not an eoa|nonce has max value|only replay-protected|invalid transaction v, r, s values|rlp: |typed transaction too short)/i,
    { code: -32000, message: 'invalid sender' },
  ),
  row('request', 'geth', /^tx fee .* exceeds the configured cap/, {
    code: -32000,
    message: 'tx fee (1.20 ether) exceeds the configured cap (1.00 ether)',
  }),
  row(
    'request',
    'besu',
    /^(Nonce too low$|Upfront cost exceeds account balance|Known transaction|Intrinsic gas exceeds gas limit|Transaction gas price .* too low|Transaction nonce is too distant)/i,
    { code: -32001, message: 'Nonce too low' },
  ),
  row(
    'request',
    'nethermind',
    /^(AlreadyKnown|OldNonce|InsufficientFunds|FeeTooLow|NonceGap|Invalid)/,
    { code: -32010, message: 'OldNonce, Current nonce: 5, nonce of rejected tx: 3' },
  ),
  row(
    'request',
    'hardhat',
    /^(Nonce too (low|high)\. Expected nonce|sender doesn't have enough funds|Transaction gas limit is)/i,
    { code: -32000, message: 'Nonce too low. Expected nonce to be 5 but got 3.' },
  ),
];

/** The first rule matching `code` and `message`, or undefined. */
export function matchErrorRule(code: number, message: string): ErrorRule | undefined {
  for (const rule of ERROR_RULES) {
    if (rule.codes !== undefined && !rule.codes.includes(code)) continue;
    if (rule.message !== undefined && !rule.message.test(message)) continue;
    return rule;
  }
  return undefined;
}

/** Whose fault an error with `code` and `message` is (`unknown` when no rule matches). */
export function errorFault(code: number, message: string): ErrorFault {
  return matchErrorRule(code, message)?.fault ?? 'unknown';
}
