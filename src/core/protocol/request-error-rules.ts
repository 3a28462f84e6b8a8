/** Upstream-error rows that are the request's own fault (upstream-errors.ts). */
import { ALREADY_KNOWN_ANSWERS } from './already-known.js';
import { row, type ErrorRule } from './error-rule.js';

const REVERT_DATA =
  '0x08c379a0' +
  '0000000000000000000000000000000000000000000000000000000000000020' +
  '0000000000000000000000000000000000000000000000000000000000000026' +
  '45524332303a207472616e7366657220616d6f756e7420657863656564732062' +
  '616c616e63650000000000000000000000000000000000000000000000000000';

/** The request's-fault rows, in match order (after the node's). */
export const REQUEST_ERROR_RULES: readonly ErrorRule[] = [
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
