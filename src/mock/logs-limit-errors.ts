/**
 * How providers refuse an eth_getLogs that is too wide or too full (issue 29), spelled as
 * their users quote them (sources in core/protocol/logs-limit-errors.ts, which reads them):
 * built for a given request so a mock (or a test's proxy in front of a real node) answers
 * exactly what the provider would.
 */
import type { NodeErrorPreset } from './node-error-preset.js';
import type { MockRpcError } from './types.js';

/** Which provider's words. */
export type LogsLimitShape = 'alchemy' | 'infura' | 'infura_range' | 'quicknode' | 'geth';

/** Every shape, in help-text order. */
export const LOGS_LIMIT_SHAPES: readonly LogsLimitShape[] = [
  'alchemy',
  'infura',
  'infura_range',
  'quicknode',
  'geth',
];

/** What the refused request asked and what the node allows. */
export interface LogsLimitFacts {
  /** Blocks (range shapes) or logs (result shapes) the node serves. */
  readonly limit: number;
  /** The request's range. */
  readonly from: number;
  readonly to: number;
  /** Result shapes: a range that would have fitted (default: `limit` blocks from `from`). */
  readonly fits?: readonly [number, number];
}

const hex = (n: number): string => `0x${n.toString(16)}`;

/** Shapes that limit blocks per query (the rest limit logs per answer). */
export function limitsBlocks(shape: LogsLimitShape): boolean {
  return shape === 'alchemy' || shape === 'infura_range' || shape === 'quicknode';
}

/** The provider's error for a request its limit refuses. */
export function logsLimitError(shape: LogsLimitShape, facts: LogsLimitFacts): MockRpcError {
  const { limit, from, to } = facts;
  const [a, b] = facts.fits ?? [from, Math.min(to, from + limit - 1)];
  switch (shape) {
    case 'alchemy':
      return {
        code: -32600,
        message: `You can make eth_getLogs requests with up to a ${limit} block range. Based on your parameters, this block range should work: [${hex(a)}, ${hex(b)}]`,
      };
    case 'infura':
      return {
        code: -32005,
        message: `query returned more than ${limit} results. Try with this block range [${hex(a)}, ${hex(b)}].`,
        data: { from: hex(a), limit, to: hex(b) },
      };
    case 'infura_range':
      return { code: -32602, message: `range ${to - from + 1} exceeds limit of ${limit}` };
    case 'quicknode':
      return {
        status: 413,
        code: -32614,
        message: `eth_getLogs is limited to a ${limit.toLocaleString('en-US')} range`,
      };
    case 'geth':
      return { code: -32000, message: `query returned more than ${limit} results` };
  }
}

const preset = (shape: LogsLimitShape, summary: string, fallback: number): NodeErrorPreset => ({
  summary,
  param: { name: 'limit', kind: 'integer', fallback },
  build: (limit) => logsLimitError(shape, { limit: Number(limit), from: 0x1000, to: 0x1000 * 4 }),
});

/** The shapes as method-error presets of `cascade mock-nodes`. */
export const LOGS_LIMIT_PRESETS: Readonly<Record<string, NodeErrorPreset>> = {
  'alchemy.logs_range': preset(
    'alchemy',
    'eth_getLogs too wide: -32600 "…up to a N block range… this block range should work: [a, b]"',
    10_000,
  ),
  'infura.logs_results': preset(
    'infura',
    'eth_getLogs too full: -32005 "query returned more than N results…", data {from, to, limit}',
    10_000,
  ),
  'infura.logs_range': preset(
    'infura_range',
    'eth_getLogs too wide: -32602 "range R exceeds limit of N"',
    10_000,
  ),
  'quicknode.logs_range': preset(
    'quicknode',
    'eth_getLogs too wide: HTTP 413, -32614 "eth_getLogs is limited to a N range"',
    10_000,
  ),
  'geth.logs_results': preset(
    'geth',
    'eth_getLogs too full: -32000 "query returned more than N results"',
    10_000,
  ),
};
