/**
 * `cascade price eth_getLogs --blocks N` (issue 29): how a range of N blocks would be cut on
 * each node — its configured `max_logs_block_range` (node table, else price list) — and what
 * that costs, in routing order; and whether the operator's `max_logs_block_range` refuses it.
 * Limits a running server learned from the providers' errors may cut finer (`cascade status`).
 */
import {
  UNPRICED,
  chunkCount,
  configuredBlockRange,
  priceOf,
  type Config,
  type MethodRegistry,
} from '../core/index.js';
import { renderTable } from './output.js';

/** One node's plan for the range. */
export interface LogsPlanRow {
  readonly node: string;
  readonly tier: number;
  /** Blocks per query on the node; null: no limit known (one query). */
  readonly blocks_per_query: number | null;
  /** Queries (null: the node does not price eth_getLogs). */
  readonly queries: number | null;
  readonly credits_per_query: number | null;
  readonly credits: number | null;
  /** Credits the node may spend before it spills over; null: unmetered. */
  readonly spillover_threshold: number | null;
}

/** The plans, and the refusal the operator's limit would give (null: none). */
export interface LogsPlanReport {
  readonly blocks: number;
  readonly max_logs_block_range: number | null;
  readonly refused: boolean;
  readonly nodes: readonly LogsPlanRow[];
}

/** Each node's plan for `blocks` blocks, in tier order. */
export function logsPlans(
  config: Config,
  registry: MethodRegistry,
  blocks: number,
): LogsPlanReport {
  const id = registry.idOf('eth_getLogs');
  const nodes = [...config.nodes].sort((a, b) => a.tier - b.tier);
  const rows = nodes.map((node): LogsPlanRow => {
    const price = priceOf(node.pricing, id);
    const limit = configuredBlockRange(node) ?? null;
    const queries = price === UNPRICED ? null : chunkCount(blocks, limit ?? undefined);
    return {
      node: node.name,
      tier: node.tier,
      blocks_per_query: limit,
      queries,
      credits_per_query: price === UNPRICED ? null : price,
      credits: queries === null ? null : queries * price,
      spillover_threshold: Number.isFinite(node.spilloverThreshold)
        ? node.spilloverThreshold
        : null,
    };
  });
  const max = config.server.chain?.maxLogsBlockRange ?? null;
  return { blocks, max_logs_block_range: max, refused: max !== null && blocks > max, nodes: rows };
}

const count = (n: number | null, none: string): string =>
  n === null ? none : n.toLocaleString('en-US');

/** The report as people read it: a table, then the first choice or the refusal. */
export function renderLogsPlans(report: LogsPlanReport): string {
  const table = renderTable(
    ['node', 'tier', 'blocks per query', 'queries', 'credits each', 'credits', 'spillover at'],
    report.nodes.map((row) => [
      row.node,
      String(row.tier),
      count(row.blocks_per_query, 'no limit'),
      count(row.queries, 'not priced'),
      count(row.credits_per_query, '—'),
      count(row.credits, '—'),
      count(row.spillover_threshold, 'unmetered'),
    ]),
  );
  const range = `eth_getLogs over ${count(report.blocks, '')} blocks`;
  if (report.refused) {
    return `${table}\n${range}: refused before any node is asked — over max_logs_block_range (${count(report.max_logs_block_range, '')} blocks)`;
  }
  const first = report.nodes.find((row) => row.queries !== null);
  if (first === undefined) return `${table}\n${range}: no node prices eth_getLogs`;
  const cut =
    first.blocks_per_query === null
      ? 'one query (no limit known)'
      : `${count(first.queries, '')} queries of at most ${count(first.blocks_per_query, '')} blocks`;
  return [
    table,
    `${range}: first choice ${first.node} (tier ${first.tier}), ${cut}, ${count(first.credits, '')} credits — priced whole before the first query; a node whose quota cannot hold it is passed over`,
    'limits a running server learned from the providers (cascade status) may cut finer',
  ].join('\n');
}
