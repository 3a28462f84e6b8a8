/**
 * `max_logs_block_range` and `max_logs_results` (issue 29): a node's eth_getLogs limits, read
 * the same way from a price list's `[limits]` (the provider's) and from a `[[nodes]]` entry
 * (this node's, over its list's). cascade plans a split that fits the node it chose.
 */
import type { FieldReader } from './toml-fields.js';

/** Most blocks any provider is asked to serve in one query (a sanity bound, not a default). */
const MAX_RANGE = 100_000_000;

/** The two keys as read (absent keys stay absent). */
export interface LogsLimitFields {
  readonly maxLogsBlockRange?: number;
  readonly maxLogsResults?: number;
}

/** Reads both keys from `reader`'s table; problems go to its list. */
export function readLogsLimitFields(reader: FieldReader): LogsLimitFields {
  const range = reader.integer('max_logs_block_range', {
    min: 1,
    max: MAX_RANGE,
    required: false,
    hint: 'the most blocks the provider serves in one eth_getLogs, e.g. 10000 (Alchemy), 2000 (Chainstack); omit it when unknown (cascade learns it from the provider errors)',
  });
  const results = reader.integer('max_logs_results', {
    min: 1,
    max: MAX_RANGE,
    required: false,
    hint: 'the most logs the provider returns in one eth_getLogs answer, e.g. 10000 (Infura); omit it when unknown',
  });
  return {
    ...(range === undefined ? {} : { maxLogsBlockRange: range }),
    ...(results === undefined ? {} : { maxLogsResults: results }),
  };
}
