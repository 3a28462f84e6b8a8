/**
 * An `eth_getLogs` request's block range (issue 29): read from its filter (`params[0]`), and
 * written back as one chunk of it. Requests are small, and this runs only for eth_getLogs when
 * some node (or the operator) has a range limit — never for any other method.
 */
import { BlockTag } from './head-scan.js';
import { STANDARD_METHODS } from './method-registry.js';
import { HUGE_BLOCK, hexQuantity } from './quantity.js';

export { HUGE_BLOCK } from './quantity.js';

/** eth_getLogs's id (standard methods have the same id in every registry). */
export const LOGS_METHOD_ID = STANDARD_METHODS.indexOf('eth_getLogs');

/**
 * A block of a filter: a number ≥ 0, HUGE_BLOCK (past Number.MAX_SAFE_INTEGER), or
 * BlockTag.latest / safe / finalized / other.
 */
export type LogsBlock = number;

/** A readable eth_getLogs filter. */
export interface LogsFilter {
  /** `params[0]`, as sent (copied into every chunk, with its own range). */
  readonly filter: Readonly<Record<string, unknown>>;
  /** `fromBlock` (absent: BlockTag.latest, the JSON-RPC default). */
  readonly from: LogsBlock;
  /** `toBlock` (absent: BlockTag.latest). */
  readonly to: LogsBlock;
}

const TAGS: Readonly<Record<string, number>> = {
  latest: BlockTag.latest,
  safe: BlockTag.safe,
  finalized: BlockTag.finalized,
  // A block the chain has not sealed: nothing to cut at.
  pending: BlockTag.other,
  earliest: 0,
};

function blockOf(value: unknown): LogsBlock | undefined {
  if (value === undefined || value === null) return BlockTag.latest;
  if (typeof value === 'number')
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  return hexQuantity(value) ?? (Object.hasOwn(TAGS, value) ? TAGS[value] : undefined);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The filter of an eth_getLogs body, or undefined when it has no range to cut: unreadable, a
 * `blockHash` filter (one block), or a block that is neither a number nor a known tag (the node
 * answers those as they are).
 */
export function readLogsFilter(body: Buffer): LogsFilter | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || !Array.isArray(parsed.params) || parsed.params.length !== 1) {
    return undefined;
  }
  const filter: unknown = parsed.params[0];
  if (!isObject(filter) || (filter.blockHash !== undefined && filter.blockHash !== null)) {
    return undefined;
  }
  const from = blockOf(filter.fromBlock);
  const to = blockOf(filter.toBlock);
  if (from === undefined || to === undefined) return undefined;
  return { filter, from, to };
}

/**
 * Whether the filter's range reaches a block past Number.MAX_SAFE_INTEGER: wider than any
 * `max_logs_block_range` (a range from such a block to the same block is one block).
 */
export function reachesHugeBlock(logs: LogsFilter): boolean {
  if (logs.to !== HUGE_BLOCK) return false;
  if (logs.from !== HUGE_BLOCK) return true;
  return BigInt(logs.filter.fromBlock as string) !== BigInt(logs.filter.toBlock as string);
}

/** `n` as a JSON-RPC quantity. */
export function quantityText(n: number): string {
  return `0x${n.toString(16)}`;
}

/** One chunk of `logs` as a request body: the same filter over blocks `from`..`to`. */
export function chunkBody(logs: LogsFilter, from: number, to: number): Buffer {
  const filter = { ...logs.filter, fromBlock: quantityText(from), toBlock: quantityText(to) };
  return Buffer.from(
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] }),
    'utf8',
  );
}
