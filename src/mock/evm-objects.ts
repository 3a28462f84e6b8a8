/**
 * Ethereum blocks, transactions, receipts and logs with every field a post-Cancun mainnet
 * node sends, as hex quantities, so viem's and ethers' formatters accept them.
 */
import { hexOf, toQuantity } from './encoding.js';

export const CHAIN_ID = 1;
export const BASE_FEE_WEI = 12_000_000_000;
export const PRIORITY_FEE_WEI = 1_000_000_000;
const TXS_PER_BLOCK = 3;
const EMPTY_BLOOM = `0x${'00'.repeat(256)}`;
const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const USDC = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const MINER = '0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5';
/** Average size of one log object, for padding eth_getLogs. */
export const LOG_ENTRY_BYTES = 560;

/** A 20-byte address derived from `seed`. */
export function addressOf(seed: string): string {
  return hexOf(`addr:${seed}`, 20);
}

/** The hash of block `n`. */
export function blockHashOf(n: number): string {
  return hexOf(`block:${n}`);
}

/** Hash of transaction `i` of block `n`. */
export function txHashOf(n: number, i: number): string {
  return hexOf(`tx:${n}:${i}`);
}

/** A signed EIP-1559 transfer, as eth_getTransactionByHash returns it. */
export function transactionJson(n: number, i: number, hash = txHashOf(n, i)): string {
  return (
    `{"accessList":[],"blockHash":"${blockHashOf(n)}","blockNumber":"${toQuantity(n)}",` +
    `"chainId":"${toQuantity(CHAIN_ID)}","from":"${addressOf(`from:${hash}`)}","gas":"0x5208",` +
    `"gasPrice":"${toQuantity(BASE_FEE_WEI + PRIORITY_FEE_WEI)}","hash":"${hash}","input":"0x",` +
    `"maxFeePerGas":"${toQuantity(2 * BASE_FEE_WEI)}","maxPriorityFeePerGas":"${toQuantity(PRIORITY_FEE_WEI)}",` +
    `"nonce":"${toQuantity(i + 7)}","r":"${hexOf(`r:${hash}`)}","s":"${hexOf(`s:${hash}`)}",` +
    `"to":"${addressOf(`to:${hash}`)}","transactionIndex":"${toQuantity(i)}","type":"0x2",` +
    `"v":"0x1","value":"0xde0b6b3a7640000","yParity":"0x1"}`
  );
}

/** Block `n` with hashes or full transaction objects. */
export function blockJson(
  n: number,
  timestamp: number,
  full: boolean,
  hash = blockHashOf(n),
): string {
  const txs = new Array<string>(TXS_PER_BLOCK);
  for (let i = 0; i < TXS_PER_BLOCK; i++) {
    txs[i] = full ? transactionJson(n, i) : `"${txHashOf(n, i)}"`;
  }
  return (
    `{"baseFeePerGas":"${toQuantity(BASE_FEE_WEI)}","blobGasUsed":"0x0","difficulty":"0x0",` +
    `"excessBlobGas":"0x0","extraData":"0x6265617665726275696c642e6f7267","gasLimit":"0x1c9c380",` +
    `"gasUsed":"0xe4e1c0","hash":"${hash}","logsBloom":"${EMPTY_BLOOM}","miner":"${MINER}",` +
    `"mixHash":"${hexOf(`mix:${n}`)}","nonce":"0x0000000000000000","number":"${toQuantity(n)}",` +
    `"parentBeaconBlockRoot":"${hexOf(`beacon:${n}`)}","parentHash":"${blockHashOf(n - 1)}",` +
    `"receiptsRoot":"${hexOf(`receipts:${n}`)}","sha3Uncles":"${EMPTY_UNCLES}","size":"0x2b4e",` +
    `"stateRoot":"${hexOf(`state:${n}`)}","timestamp":"${toQuantity(timestamp)}",` +
    `"totalDifficulty":"0xc70d815d562d3cfa955","transactions":[${txs.join(',')}],` +
    `"transactionsRoot":"${hexOf(`txroot:${n}`)}","uncles":[],"withdrawals":[],` +
    `"withdrawalsRoot":"${hexOf(`withdrawals:${n}`)}"}`
  );
}

/** An ERC-20 Transfer log. */
export function logJson(
  n: number,
  txIndex: number,
  logIndex: number,
  txHash = txHashOf(n, txIndex),
): string {
  const from = `0x${'0'.repeat(24)}${addressOf(`lf:${n}:${logIndex}`).slice(2)}`;
  const to = `0x${'0'.repeat(24)}${addressOf(`lt:${n}:${logIndex}`).slice(2)}`;
  return (
    `{"address":"${USDC}","blockHash":"${blockHashOf(n)}","blockNumber":"${toQuantity(n)}",` +
    `"data":"0x${(1_000_000 * (logIndex + 1)).toString(16).padStart(64, '0')}",` +
    `"logIndex":"${toQuantity(logIndex)}","removed":false,"topics":["${TRANSFER_TOPIC}","${from}","${to}"],` +
    `"transactionHash":"${txHash}","transactionIndex":"${toQuantity(txIndex)}"}`
  );
}

/** `count` logs ending at block `head`. */
export function logsJson(head: number, count: number): string {
  const logs = new Array<string>(count);
  for (let i = 0; i < count; i++) logs[i] = logJson(head - Math.floor(i / 8), i % 3, i % 8);
  return `[${logs.join(',')}]`;
}

/** The receipt of transaction `hash`, mined in block `n`. */
export function receiptJson(hash: string, n: number): string {
  return (
    `{"blockHash":"${blockHashOf(n)}","blockNumber":"${toQuantity(n)}","contractAddress":null,` +
    `"cumulativeGasUsed":"0x1a0f2","effectiveGasPrice":"${toQuantity(BASE_FEE_WEI + PRIORITY_FEE_WEI)}",` +
    `"from":"${addressOf(`from:${hash}`)}","gasUsed":"0x5208","logs":[${logJson(n, 0, 0, hash)}],` +
    `"logsBloom":"${EMPTY_BLOOM}","status":"0x1","to":"${addressOf(`to:${hash}`)}",` +
    `"transactionHash":"${hash}","transactionIndex":"0x0","type":"0x2"}`
  );
}
