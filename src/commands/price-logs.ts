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
  priceSourceOf,
  chainOf,
  type ChainConfig,
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
  /** Credits the node (or its account) may spend before it spills over; null: unmetered. */
  readonly spillover_threshold: number | null;
  /** The provider account whose pool that threshold is (only when the node names one). */
  readonly account?: string;
}

/** One chain's plans, and the refusal the operator's limit would give (null: none). */
export interface LogsPlanReport {
  /** The chain (only with `[[chains]]`). */
  readonly chain?: string;
  readonly blocks: number;
  readonly max_logs_block_range: number | null;
  readonly refused: boolean;
  readonly nodes: readonly LogsPlanRow[];
}

/** One chain's plan for `blocks` blocks, node by node in tier order. */
function chainPlan(config: Config, chain: ChainConfig, id: number, blocks: number): LogsPlanReport {
  const nodes = config.nodes
    .filter((node) => chainOf(node) === chain.name)
    .sort((a, b) => a.tier - b.tier);
  const rows = nodes.map((node): LogsPlanRow => {
    const price = priceOf(node.pricing, id);
    // A node of an account spills over when the account's pool passes its threshold.
    const account = config.accounts?.find((one) => one.name === node.account);
    const threshold = account?.spilloverThreshold ?? node.spilloverThreshold;
    const limit = configuredBlockRange(node) ?? null;
    const queries = price === UNPRICED ? null : chunkCount(blocks, limit ?? undefined);
    return {
      node: node.name,
      tier: node.tier,
      blocks_per_query: limit,
      queries,
      credits_per_query: price === UNPRICED ? null : price,
      credits: queries === null ? null : queries * price,
      spillover_threshold: Number.isFinite(threshold) ? threshold : null,
      ...(account === undefined ? {} : { account: account.name }),
    };
  });
  const max = chain.lag?.maxLogsBlockRange ?? null;
  return {
    ...(config.chains === undefined ? {} : { chain: chain.name }),
    blocks,
    max_logs_block_range: max,
    refused: max !== null && blocks > max,
    nodes: rows,
  };
}

/**
 * The plans for `blocks` blocks on each chain where some node's price list names eth_getLogs
 * (a Solana chain's lists price it only through `unknown_method_cost`: nothing to show);
 * every chain when none does, to say so.
 */
export function logsPlans(
  config: Config,
  chains: readonly ChainConfig[],
  registry: MethodRegistry,
  blocks: number,
): LogsPlanReport[] {
  const id = registry.idOf('eth_getLogs');
  const named = chains.filter((chain) =>
    config.nodes.some(
      (node) =>
        chainOf(node) === chain.name &&
        priceSourceOf(node.pricing, 'eth_getLogs') !== 'unknown_method_cost' &&
        priceOf(node.pricing, id) !== UNPRICED,
    ),
  );
  return (named.length > 0 ? named : chains).map((chain) => chainPlan(config, chain, id, blocks));
}

const count = (n: number | null, none: string): string =>
  n === null ? none : n.toLocaleString('en-US');

/** One report as people read it: a table, then the first choice or the refusal. */
export function renderLogsPlan(report: LogsPlanReport): string {
  const table = renderTable(
    ['node', 'tier', 'blocks per query', 'queries', 'credits each', 'credits', 'spillover at'],
    report.nodes.map((row) => [
      row.node,
      String(row.tier),
      count(row.blocks_per_query, 'no limit'),
      count(row.queries, 'not priced'),
      count(row.credits_per_query, '—'),
      count(row.credits, '—'),
      count(row.spillover_threshold, 'unmetered') +
        (row.account === undefined ? '' : ` (account ${row.account})`),
    ]),
  );
  const where = report.chain === undefined ? '' : ` on ${report.chain}`;
  const range = `eth_getLogs${where} over ${count(report.blocks, '')} blocks`;
  if (report.refused) {
    return `${table}\n${range}: refused before any node is asked — over max_logs_block_range (${count(report.max_logs_block_range, '')} blocks)`;
  }
  const first = report.nodes.find((row) => row.queries !== null);
  if (first === undefined) return `${table}\n${range}: no node prices eth_getLogs`;
  const cut =
    first.blocks_per_query === null
      ? 'one query (no limit known)'
      : `${count(first.queries, '')} queries of at most ${count(first.blocks_per_query, '')} blocks`;
  return `${table}\n${range}: first choice ${first.node} (tier ${first.tier}), ${cut}, ${count(first.credits, '')} credits — priced whole before the first query; a node whose quota cannot hold it is passed over`;
}

/** Every chain's report, one after another, and what a running server may know better. */
export function renderLogsPlans(reports: readonly LogsPlanReport[]): string {
  return [
    ...reports.map(renderLogsPlan),
    'limits a running server learned from the providers (cascade status) may cut finer',
  ].join('\n');
}
