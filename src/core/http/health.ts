import type { WorkerNodeChain, WorkerNodeHealth } from '../cluster/worker-messages.js';
import { nodeChainReport } from '../chain/chain-report.js';
import type { ChainState } from '../chain/chain-state.js';
import type { RoutingTable } from '../routing/routing-table.js';

/** One node in GET /health. */
export interface NodeHealth {
  readonly name: string;
  readonly tier: number;
  /** The chain it serves (only with `[[chains]]`: chain-health.ts adds it). */
  readonly chain?: string;
  /** The provider account billed for it (only when it names one). */
  readonly account?: string;
  readonly status: 'up' | 'down' | 'unknown';
  readonly latency_ms: number | null;
  /** Present (true) when an operator cordoned the node: it takes no new requests. */
  readonly cordoned?: true;
  /** Its heads by commitment as its answers showed them (absent: none read yet). */
  readonly head?: Readonly<Record<string, number>>;
  /** Slots/blocks behind the head two nodes confirm (absent: unknown). */
  readonly lag?: number;
  /** Present (true) when `[server] expect_chain` found it on another chain: never used. */
  readonly wrong_chain?: true;
}

/** Marks a cordoned node (it no longer counts as active). */
function withCordon(entry: NodeHealth, cordoned: boolean): NodeHealth {
  return cordoned ? { ...entry, cordoned: true } : entry;
}

/** The GET /health document (CascadeRPC's shape and key order). */
export interface HealthReport {
  readonly status: 'ok' | 'degraded' | 'critical';
  readonly active_nodes: number;
  readonly total_nodes: number;
  readonly nodes: readonly NodeHealth[];
  /** Each chain's own status (only with `[[chains]]`: chain-health.ts). */
  readonly chains?: readonly ChainHealth[];
  /** Each provider account's pool (only with `[[accounts]]`: chain-health.ts). */
  readonly accounts?: readonly AccountHealth[];
}

/** One chain in GET /health: where it is served and its status from its own nodes. */
export interface ChainHealth {
  readonly name: string;
  readonly paths: readonly string[];
  readonly hosts: readonly string[];
  readonly status: HealthReport['status'];
  readonly active_nodes: number;
  readonly total_nodes: number;
}

/** One provider account in GET /health: its pool against its plan. */
export interface AccountHealth {
  readonly name: string;
  /** Credits its nodes booked this billing period. */
  readonly used: number;
  /** `monthly_limit`; null when unmetered. */
  readonly quota: number | null;
  /** Usage past which every node of the account is skipped; null when unmetered. */
  readonly threshold: number | null;
  readonly rps_limit: number | null;
  readonly max_concurrent: number | null;
  readonly reset_day: number;
  /** The next reset (UTC day): when the billing period ends. */
  readonly next_reset: string;
  /** The nodes billed to it, config order. */
  readonly nodes: readonly string[];
}

/**
 * Health from state the traffic already produced — never by probing. A penalized node is
 * down; one never answered successfully is unknown (and counts as active: the router will
 * offer it a request); otherwise up with its latency EMA in whole milliseconds. A cordoned
 * node says so and does not count as active.
 */
export function healthReport(
  table: RoutingTable,
  now: number,
  /** The chain state a node's heads are judged in (one per chain); default the table's. */
  chainOf: (node: RoutingTable['all'][number]) => ChainState | undefined = () => table.chain,
): HealthReport {
  const nodes = table.all.map((node) =>
    withChain(withCordon(nodeHealth(node, now), node.cordoned), node, chainOf(node), now),
  );
  return summarize(nodes);
}

/** Adds the node's head and lag once its answers showed any (plain fleets keep the shape). */
function withChain(
  entry: NodeHealth,
  node: RoutingTable['all'][number],
  chain: ChainState | undefined,
  now: number,
): NodeHealth {
  if (node.heads.wrongChain) return { ...entry, status: 'down', wrong_chain: true };
  if (chain === undefined || !chain.active) return entry;
  const report = nodeChainReport(chain, node.heads, now);
  if (Object.keys(report.heads).length === 0) return entry;
  return report.lag < 0
    ? { ...entry, head: report.heads }
    : { ...entry, head: report.heads, lag: report.lag };
}

function nodeHealth(node: RoutingTable['all'][number], now: number): NodeHealth {
  if (node.penalty.isActive(now)) {
    return { name: node.name, tier: node.config.tier, status: 'down', latency_ms: null };
  }
  if (!node.ema.isMeasured) {
    return { name: node.name, tier: node.config.tier, status: 'unknown', latency_ms: null };
  }
  return {
    name: node.name,
    tier: node.config.tier,
    status: 'up',
    latency_ms: Math.floor(node.ema.micros / 1000),
  };
}

export type { WorkerNodeChain, WorkerNodeHealth };

/** A worker's chain view of `node` for its sync report, or undefined (nothing known). */
export function workerNodeChain(
  node: RoutingTable['all'][number],
  chain: ChainState | undefined,
  now: number,
): WorkerNodeChain | undefined {
  if (node.heads.wrongChain) return { head: {}, lag: -1, wrongChain: true };
  if (chain === undefined || !chain.active) return undefined;
  const report = nodeChainReport(chain, node.heads, now);
  if (Object.keys(report.heads).length === 0) return undefined;
  return { head: report.heads, lag: report.lag, wrongChain: false };
}

/**
 * /health for a proxy of several workers: a node is down when a worker has it penalized,
 * and its latency is the mean of the workers' measurements.
 */
export function fleetHealthReport(
  nodes: ReadonlyArray<{ readonly name: string; readonly tier: number }>,
  workers: ReadonlyArray<Readonly<Record<string, WorkerNodeHealth>>>,
  cordoned: ReadonlySet<string> = new Set(),
): HealthReport {
  const entries = nodes.map((node) =>
    withFleetChain(
      withCordon(fleetNodeHealth(node, workers), cordoned.has(node.name)),
      workers.map((worker) => worker[node.name]?.[2]),
    ),
  );
  return summarize(entries);
}

/**
 * The workers' chain views merged: each worker learns heads from its own traffic, so a node's
 * head (per commitment) is the highest any worker saw, and its lag the smallest any worker
 * knows; a node any worker found on another chain is down.
 */
function withFleetChain(
  entry: NodeHealth,
  views: ReadonlyArray<WorkerNodeChain | undefined>,
): NodeHealth {
  const head: Record<string, number> = {};
  let lag = -1;
  let seen = false;
  for (const view of views) {
    if (view === undefined) continue;
    if (view.wrongChain) return { ...entry, status: 'down', wrong_chain: true };
    for (const [name, value] of Object.entries(view.head)) {
      seen = true;
      if (!(name in head) || value > head[name]!) head[name] = value;
    }
    if (view.lag >= 0 && (lag < 0 || view.lag < lag)) lag = view.lag;
  }
  if (!seen) return entry;
  return lag < 0 ? { ...entry, head } : { ...entry, head, lag };
}

function fleetNodeHealth(
  node: { readonly name: string; readonly tier: number },
  workers: ReadonlyArray<Readonly<Record<string, WorkerNodeHealth>>>,
): NodeHealth {
  const views = workers.map((worker) => worker[node.name]).filter((v) => v !== undefined);
  if (views.some(([down]) => down > 0)) {
    return { name: node.name, tier: node.tier, status: 'down', latency_ms: null };
  }
  const measured = views.map(([, ema]) => ema).filter((ema) => ema >= 0);
  if (measured.length === 0) {
    return { name: node.name, tier: node.tier, status: 'unknown', latency_ms: null };
  }
  const mean = measured.reduce((a, b) => a + b, 0) / measured.length;
  return { name: node.name, tier: node.tier, status: 'up', latency_ms: Math.floor(mean / 1000) };
}

/** Status, active and total of `nodes`: active is neither down nor cordoned. */
export function summarize(nodes: readonly NodeHealth[]): HealthReport {
  const active = nodes.filter((node) => node.status !== 'down' && node.cordoned !== true).length;
  const status = active === 0 ? 'critical' : active < nodes.length ? 'degraded' : 'ok';
  return { status, active_nodes: active, total_nodes: nodes.length, nodes };
}
