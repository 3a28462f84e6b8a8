/**
 * GET /admin/nodes: where traffic goes right now, one row per node, built from state the
 * traffic already produced (never by probing). With several workers each builds its rows and
 * the primary merges them (`mergeNodeViews`): traffic adds up, a penalty any worker holds
 * counts, latency is the mean of the measured ones.
 */
import { nodeChainReport } from '../chain/chain-report.js';
import type { ChainState } from '../chain/chain-state.js';
import type { Clock } from '../clock.js';
import type { NodeConfig } from '../config/types.js';
import { configuredBlockRange } from '../node/logs-limits.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { nextReset } from '../quota/billing-period.js';
import type { RoutingTable } from '../routing/routing-table.js';
import type { Topology } from '../routing/topology.js';
import type { ActivityWindow } from './activity-window.js';

/** A node's state for an operator. */
export type NodeState = 'up' | 'penalized' | 'cordoned' | 'unknown';

/** One row of GET /admin/nodes. */
export interface NodeView {
  readonly name: string;
  readonly tier: number;
  /** The chain it serves (only with `[[chains]]`). */
  readonly chain?: string;
  /** The provider account billed for it (only when it names one). */
  readonly account?: string;
  /** 1-based position in the routing order now (the order requests try nodes in). */
  readonly rank: number;
  readonly state: NodeState;
  readonly cordoned: boolean;
  /** When the penalty ends (ISO time), or null when none is active. */
  readonly penalized_until: string | null;
  readonly penalty_reason: string | null;
  /** Latency EMA in ms (0.1 ms precision); null before the first answer. */
  readonly latency_ms: number | null;
  /** Its most current head (slot/block) as its answers showed it; null when none is known. */
  readonly head?: number | null;
  /** Slots/blocks behind the head two nodes confirm; null when unknown. */
  readonly lag?: number | null;
  /** Attempts in the last second. */
  readonly rps: number;
  readonly rps_limit: number | null;
  readonly in_flight: number;
  readonly max_concurrent: number | null;
  readonly credits_used: number;
  /** Usage past which the node is skipped; null when unmetered. */
  readonly spillover_threshold: number | null;
  readonly monthly_limit: number | null;
  /** The next billing-period reset (UTC day). */
  readonly next_reset: string;
  readonly requests_last_minute: number;
  readonly failures_last_minute: number;
  /** Most blocks per eth_getLogs as configured (node table or price list); null: none. */
  readonly logs_block_range?: number | null;
  /** Most blocks per eth_getLogs the node's errors taught; null: nothing learned. */
  readonly logs_block_range_learned?: number | null;
  /** Most logs per eth_getLogs answer the node's errors taught; null: nothing learned. */
  readonly logs_results_learned?: number | null;
}

const finite = (value: number): number | null => (Number.isFinite(value) ? value : null);

function stateOf(cordoned: boolean, penalized: boolean, measured: boolean): NodeState {
  if (cordoned) return 'cordoned';
  if (penalized) return 'penalized';
  return measured ? 'up' : 'unknown';
}

function limitsOf(config: NodeConfig, today: Date) {
  return {
    rps_limit: finite(config.rpsLimit),
    max_concurrent: finite(config.maxConcurrent),
    spillover_threshold: finite(config.spilloverThreshold),
    monthly_limit: config.monthlyLimit ?? null,
    next_reset: nextReset(today, config.resetDay),
    logs_block_range: configuredBlockRange(config) ?? null,
  };
}

/** What the node's errors taught about its eth_getLogs limits (null: nothing). */
function learnedOf(node: UpstreamNode) {
  return {
    logs_block_range_learned: node.logsLimits.blockRange ?? null,
    logs_results_learned: node.logsLimits.results ?? null,
  };
}

/** Its chain (with `[[chains]]`) and account (when it names one); nothing for a plain config. */
function billingOf(config: NodeConfig): { chain?: string; account?: string } {
  return {
    ...(config.chain === undefined ? {} : { chain: config.chain }),
    ...(config.account === undefined ? {} : { account: config.account }),
  };
}

/** The node's head and lag (null: unknown). */
function chainOf(node: UpstreamNode, chain: ChainState | undefined, now: number) {
  if (chain === undefined || !chain.active) return { head: null, lag: null };
  const report = nodeChainReport(chain, node.heads, now);
  const heads = Object.values(report.heads);
  return { head: heads.length === 0 ? null : heads[0]!, lag: report.lag < 0 ? null : report.lag };
}

function viewOf(
  node: UpstreamNode,
  rank: number,
  clock: Clock,
  activity: ActivityWindow,
  today: Date,
  chain: ChainState | undefined,
): NodeView {
  const now = clock.now();
  const penalized = node.penalty.isActive(now);
  const recent = activity.activity(node.name, node);
  return {
    name: node.name,
    tier: node.config.tier,
    ...billingOf(node.config),
    rank,
    state: stateOf(node.cordoned, penalized, node.ema.isMeasured),
    cordoned: node.cordoned,
    penalized_until: penalized
      ? new Date(clock.wallNow() + node.penalty.until - now).toISOString()
      : null,
    penalty_reason: penalized ? node.penaltyReason : null,
    latency_ms: node.ema.isMeasured ? Math.round(node.ema.micros / 100) / 10 : null,
    ...chainOf(node, chain, now),
    rps: recent.rps,
    in_flight: node.permits.inFlight,
    credits_used: node.usage.used,
    requests_last_minute: recent.requestsLastMinute,
    failures_last_minute: recent.failuresLastMinute,
    ...limitsOf(node.config, today),
    ...learnedOf(node),
  };
}

/**
 * The rows of this process's nodes, in config order. A node's rank is its place in its own
 * chain's walk order, and its head and lag are judged in its chain's state.
 */
export function nodeViews(
  topology: Pick<Topology, 'table' | 'slot'>,
  clock: Clock,
  activity: ActivityWindow,
): NodeView[] {
  const today = new Date(clock.wallNow());
  const all = topology.table;
  return all.all.map((node) => {
    const chain = node.config.chain;
    const table: RoutingTable = chain === undefined ? all : (topology.slot(chain)?.table ?? all);
    return viewOf(node, table.ranked.indexOf(node) + 1, clock, activity, today, table.chain);
  });
}

function pickOf(
  values: readonly (number | null | undefined)[],
  pick: (...values: number[]) => number,
): number | null {
  const known = values.filter((value): value is number => typeof value === 'number');
  return known.length === 0 ? null : pick(...known);
}

function mergeOne(
  config: NodeConfig,
  rows: readonly NodeView[],
  cordoned: boolean,
  used: number,
  today: Date,
): NodeView {
  const penalties = rows.filter((row) => row.penalized_until !== null);
  const latest = penalties.sort((a, b) => b.penalized_until!.localeCompare(a.penalized_until!))[0];
  const measured = rows.map((row) => row.latency_ms).filter((ms): ms is number => ms !== null);
  const latency =
    measured.length === 0
      ? null
      : Math.round((measured.reduce((a, b) => a + b, 0) / measured.length) * 10) / 10;
  const sum = (pick: (row: NodeView) => number) =>
    rows.reduce((total, row) => total + pick(row), 0);
  return {
    name: config.name,
    tier: config.tier,
    ...billingOf(config),
    rank: rows[0]?.rank ?? 0,
    state: stateOf(cordoned, latest !== undefined, latency !== null),
    cordoned,
    penalized_until: latest?.penalized_until ?? null,
    penalty_reason: latest?.penalty_reason ?? null,
    latency_ms: latency,
    // Each worker reads heads from its own traffic: the freshest head, the smallest lag known.
    head: pickOf(
      rows.map((row) => row.head),
      Math.max,
    ),
    lag: pickOf(
      rows.map((row) => row.lag),
      Math.min,
    ),
    rps: sum((row) => row.rps),
    in_flight: sum((row) => row.in_flight),
    credits_used: used,
    requests_last_minute: sum((row) => row.requests_last_minute),
    failures_last_minute: sum((row) => row.failures_last_minute),
    ...limitsOf(config, today),
    // Each worker learns from its own traffic: the lowest limit any worker was taught.
    logs_block_range_learned: pickOf(
      rows.map((row) => row.logs_block_range_learned),
      Math.min,
    ),
    logs_results_learned: pickOf(
      rows.map((row) => row.logs_results_learned),
      Math.min,
    ),
  };
}

/**
 * The whole proxy's rows from its workers' (`workers`, one list each): the nodes and limits
 * are the configured ones, usage and cordons the primary's.
 */
export function mergeNodeViews(
  nodes: readonly NodeConfig[],
  workers: ReadonlyArray<readonly NodeView[]>,
  cordoned: ReadonlySet<string>,
  used: (name: string) => number,
  today: Date,
): NodeView[] {
  return nodes.map((config) => {
    const rows = workers.flatMap((rows) => rows.filter((row) => row.name === config.name));
    return mergeOne(config, rows, cordoned.has(config.name), used(config.name), today);
  });
}
