import { ChainState, DEFAULT_CHAIN_OPTIONS, type ChainStateOptions } from '../chain/chain-state.js';
import type { Clock } from '../clock.js';
import type { NodeConfig } from '../config/types.js';
import type { ProxyMetrics } from '../metrics.js';
import type { DeadlineQueue } from '../node/deadline-queue.js';
import type { HttpTransport } from '../node/http-transport.js';
import { UpstreamNode, type UsageCounter } from '../node/upstream-node.js';
import { buildTable, type RoutingTable } from './routing-table.js';

/** Where nodes get their usage slots (the quota ledger). */
export interface UsageProvider {
  counter(name: string): UsageCounter;
}

/** What a reload changed, for the one-line log. */
export interface TopologyDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** `name: field, field` for surviving nodes whose config changed. */
  readonly changed: readonly string[];
}

const COMPARED_FIELDS = [
  'url',
  'wsUrl',
  'tier',
  'rpsLimit',
  'maxConcurrent',
  'maxConnections',
  'keepAliveMs',
  'monthlyLimit',
  'resetDay',
  'spilloverThreshold',
  'maxLogsBlockRange',
] as const;
const FIELD_LABEL: Record<(typeof COMPARED_FIELDS)[number], string> = {
  url: 'url',
  wsUrl: 'ws_url',
  tier: 'tier',
  rpsLimit: 'rps_limit',
  maxConcurrent: 'max_concurrent',
  maxConnections: 'max_connections',
  keepAliveMs: 'keep_alive_ms',
  monthlyLimit: 'monthly_limit',
  resetDay: 'reset_day',
  spilloverThreshold: 'spillover threshold',
  maxLogsBlockRange: 'max_logs_block_range',
};

function changedFields(before: NodeConfig, after: NodeConfig): string[] {
  const fields: string[] = COMPARED_FIELDS.filter((key) => before[key] !== after[key]).map(
    (key) => FIELD_LABEL[key],
  );
  if (before.pricing !== after.pricing && !samePrices(before, after)) fields.push('prices');
  return fields;
}

function samePrices(a: NodeConfig, b: NodeConfig): boolean {
  const x = a.pricing;
  const y = b.pricing;
  if (x.unknownMethodCost !== y.unknownMethodCost || x.named.size !== y.named.size) return false;
  for (const [name, price] of x.named) if (y.named.get(name)?.cost !== price.cost) return false;
  return JSON.stringify(x.websocket) === JSON.stringify(y.websocket);
}

/** What changed between two node lists (names, and fields of surviving names). */
export function diffNodes(
  before: readonly NodeConfig[],
  after: readonly NodeConfig[],
): TopologyDiff {
  const old = new Map(before.map((config) => [config.name, config]));
  const kept = new Set(after.map((config) => config.name));
  const added: string[] = [];
  const changed: string[] = [];
  for (const config of after) {
    const previous = old.get(config.name);
    if (previous === undefined) {
      added.push(config.name);
      continue;
    }
    const fields = changedFields(previous, config);
    if (fields.length > 0) changed.push(`${config.name}: ${fields.join(', ')}`);
  }
  const removed = before.map((config) => config.name).filter((name) => !kept.has(name));
  return { added, removed, changed };
}

/**
 * The live node set. Owns every UpstreamNode, publishes an immutable RoutingTable (swapped by
 * reference on ranking and reload) and keeps a node's runtime state for as long as its name
 * stays in the config.
 */
export class Topology {
  #table: RoutingTable;
  readonly #byName = new Map<string, UpstreamNode>();
  /** The one tracker of the chain every door's routing reads (issue 26). */
  readonly chain: ChainState;

  constructor(
    nodes: readonly NodeConfig[],
    private readonly deps: {
      readonly usage: UsageProvider;
      readonly metrics: ProxyMetrics;
      readonly clock: Clock;
      readonly deadlines: DeadlineQueue;
      readonly chain?: ChainStateOptions;
    },
  ) {
    this.chain = new ChainState(deps.chain ?? DEFAULT_CHAIN_OPTIONS);
    const all = nodes.map((config) => this.#create(config));
    this.#table = buildTable(all, this.chain);
  }

  /** The current table (one property load). */
  get table(): RoutingTable {
    return this.#table;
  }

  /** A node by name. */
  node(name: string): UpstreamNode | undefined {
    return this.#byName.get(name);
  }

  /** Re-sorts by (tier, latency EMA) from state the traffic already produced. */
  rank(): void {
    this.#table = buildTable(this.#table.all, this.chain);
  }

  /**
   * Applies a reloaded node list: survivors keep their state under the new config, new names
   * start fresh, removed names go. Returns the diff and the transports to close once their
   * in-flight requests finish.
   */
  apply(nodes: readonly NodeConfig[]): { diff: TopologyDiff; retired: HttpTransport[] } {
    const now = this.deps.clock.now();
    const diff = diffNodes(
      this.#table.all.map((node) => node.config),
      nodes,
    );
    const retired: HttpTransport[] = [];
    const next = nodes.map((config) => {
      const existing = this.#byName.get(config.name);
      if (!existing) return this.#create(config);
      const old = existing.reconfigure(config, now);
      if (old) retired.push(old);
      return existing;
    });
    const keep = new Set(nodes.map((config) => config.name));
    for (const [name, node] of this.#byName) {
      if (keep.has(name)) continue;
      node.retired = true;
      retired.push(node.transport);
      this.#byName.delete(name);
      this.chain.forget(name);
      this.deps.metrics.removeNode(name);
    }
    this.#table = buildTable(next, this.chain);
    return { diff, retired };
  }

  /** Closes every node's connections. */
  async close(): Promise<void> {
    await Promise.all(this.#table.all.map((node) => node.transport.close()));
  }

  /** Closes every node's connections now, aborting attempts in flight. */
  async destroy(): Promise<void> {
    await Promise.all(this.#table.all.map((node) => node.transport.destroy()));
  }

  #create(config: NodeConfig): UpstreamNode {
    const node = new UpstreamNode(
      config,
      this.deps.usage.counter(config.name),
      this.deps.metrics.forNode(config.name),
      this.deps,
    );
    this.#byName.set(config.name, node);
    this.chain.track(node.heads);
    return node;
  }
}
