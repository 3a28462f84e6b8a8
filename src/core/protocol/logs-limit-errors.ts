/**
 * The errors providers and clients answer an `eth_getLogs` with when its range or its answer
 * is bigger than they serve (issue 29). Every one means the same thing — this node will not
 * serve this query at this size, a smaller range (or another node) will — so the error table
 * treats them alike (retry elsewhere, no penalty) and the node learns its limit from them.
 *
 * Shapes, as the providers' own users quote them:
 * - Alchemy: `-32600 "You can make eth_getLogs requests with up to a 500 block range. Based on
 *   your parameters, this block range should work: [0x123c9b2, 0x123cba5]"` (BobTheBuidler/
 *   dank_mids#772), and `"Log response size exceeded. … a cap of 10K logs in the response. …
 *   this block range should work: [0x0, 0x133e71]"` (bancorprotocol/webapp#523).
 * - Infura: `-32005 "query returned more than 10000 results. Try with this block range
 *   [0xBDE5F8, 0x102DBCC]."` with `data: {from, to, limit}` (ethers-io/ethers.js#4703), and
 *   `-32602 "range 1000000 exceeds limit of 10000"` (INFURA/infura#237).
 * - QuickNode: HTTP 413, `-32614 "eth_getLogs is limited to a 10,000 range"`
 *   (eternalsafe/wallet#57).
 * - geth / erigon behind a provider: `"query returned more than 10000 results"`; reth:
 *   `-32602 "query exceeds max block range 5000"` (paradigmxyz/reth#8558).
 * - Others ponder-sh/ponder's getLogsRetryHelper reads: publicnode `maximum block range: N`,
 *   Chainstack `Block range limit exceeded.`, Coinbase `please limit the query to at most N
 *   blocks`, Arbitrum `logs matched by query exceeds limit of N`, Ankr `block range is too wide`.
 */
import { safeQuantity } from './quantity.js';

/** What one such error says about the node and the query. */
export interface LogsLimitHint {
  /** Most blocks the node serves in one query, when the error states it. */
  readonly blockRange?: number;
  /** Most logs the node returns in one answer, when the error states it. */
  readonly results?: number;
  /** A range the node says would work for this query ([from, to], inclusive). */
  readonly suggested?: readonly [number, number];
}

/** One test over the message of every shape above (the error table's row). */
export const LOGS_LIMIT_MESSAGE =
  /up to a [\d,]+ block range|this block range should work|Log response size exceeded|query returned more than [\d,]+ results|range \d+ exceeds limit of \d+|limited to a [\d,.]+ range|query exceeds max (block range|results)|maximum block range|block range limit exceeded|block range is too wide|logs matched by query exceeds limit|limit the query to at most [\d,.]+ blocks/i;

const BLOCK_RANGE_PATTERNS: readonly RegExp[] = [
  /up to a ([\d,]+) block range/i,
  /range \d+ exceeds limit of (\d+)/i,
  /limited to a ([\d,.]+) range/i,
  /query exceeds max block range ([\d,]+)/i,
  /maximum block range:? ([\d,]+)/i,
  /limit the query to at most ([\d,.]+) blocks/i,
];
const RESULT_PATTERNS: readonly RegExp[] = [
  /query returned more than ([\d,]+) results/i,
  /logs matched by query exceeds limit of ([\d,]+)/i,
  /query exceeds max results ([\d,]+)/i,
  /cap of ([\d,]+)(K?) logs/i,
];
const SUGGESTED = /(?:should work|block range):? \[(0x[0-9a-f]+),\s*(0x[0-9a-f]+)\]/i;

/** Whether an error with this message is a node's limit on eth_getLogs. */
export function isLogsLimit(message: string): boolean {
  return LOGS_LIMIT_MESSAGE.test(message);
}

function wholeNumber(text: string, thousands = false): number | undefined {
  const value = Number(text.replace(/[,.]/g, ''));
  if (!Number.isSafeInteger(value) || value <= 0) return undefined;
  return thousands ? value * 1000 : value;
}

function firstNumber(message: string, patterns: readonly RegExp[]): number | undefined {
  for (const pattern of patterns) {
    const match = pattern.exec(message);
    if (match) return wholeNumber(match[1]!, match[2] === 'K' || match[2] === 'k');
  }
  return undefined;
}

function quantityOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  return safeQuantity(value);
}

/** Infura's `data: {from, to, limit}`: the range that works, and the results cap. */
function fromData(data: unknown): { suggested?: [number, number]; results?: number } {
  if (typeof data !== 'object' || data === null) return {};
  const { from, to, limit } = data as { from?: unknown; to?: unknown; limit?: unknown };
  const a = quantityOf(from);
  const b = quantityOf(to);
  const results = quantityOf(limit);
  return {
    ...(a !== undefined && b !== undefined && b >= a ? { suggested: [a, b] } : {}),
    ...(results !== undefined && results > 0 ? { results } : {}),
  };
}

/**
 * What an eth_getLogs limit error says (its message and `data`), or undefined when it is not
 * one. A hint with no number at all still means "smaller": the caller halves the range.
 */
export function readLogsLimit(message: string, data?: unknown): LogsLimitHint | undefined {
  if (!isLogsLimit(message)) return undefined;
  const structured = fromData(data);
  const match = SUGGESTED.exec(message);
  const a = match ? quantityOf(match[1]) : undefined;
  const b = match ? quantityOf(match[2]) : undefined;
  const suggested =
    structured.suggested ?? (a !== undefined && b !== undefined && b >= a ? [a, b] : undefined);
  const blockRange = firstNumber(message, BLOCK_RANGE_PATTERNS);
  const results = structured.results ?? firstNumber(message, RESULT_PATTERNS);
  return {
    ...(blockRange === undefined ? {} : { blockRange }),
    ...(results === undefined ? {} : { results }),
    ...(suggested === undefined ? {} : { suggested }),
  };
}

/** The limit hint of a whole JSON-RPC error answer (bytes), or undefined. */
export function logsLimitOfAnswer(body: Buffer): LogsLimitHint | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const error = (parsed as { error?: unknown } | null)?.error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { message, data } = error as { message?: unknown; data?: unknown };
  return typeof message === 'string' ? readLogsLimit(message, data) : undefined;
}
