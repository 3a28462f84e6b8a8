import { ChainState, chainOptions, type ChainStateOptions } from '../chain/chain-state.js';
import type { Clock } from '../clock.js';
import { accountUsageName } from '../config/accounts-section.js';
import { chainOf } from '../config/config-chains.js';
import {
  DEFAULT_CHAIN,
  type AccountConfig,
  type ChainConfig,
  type NodeConfig,
} from '../config/types.js';
import type { ProxyMetrics } from '../metrics.js';
import type { DeadlineQueue } from '../node/deadline-queue.js';
import type { HttpTransport } from '../node/http-transport.js';
import { ProviderAccount } from '../node/provider-account.js';
import type { ProviderLimits } from '../node/provider-limits.js';
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
  'account',
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
  account: 'account',
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

/** One chain's part of the node set: its table (swapped by reference) and its chain state. */
export class ChainSlot {
  table: RoutingTable;
  readonly state: ChainState;

  constructor(
    readonly name: string,
    options: ChainStateOptions,
  ) {
    this.state = new ChainState(options);
    this.table = buildTable([], this.state);
  }
}

/** What the topology is built from: the nodes, the chains they serve, the provider accounts. */
export interface TopologyConfig {
  readonly nodes: readonly NodeConfig[];
  /** Absent: the one default chain with the shipped lag settings. */
  readonly chains?: readonly ChainConfig[];
  readonly accounts?: readonly AccountConfig[];
}

/**
 * The live node set. Owns every UpstreamNode and ProviderAccount, publishes an immutable
 * RoutingTable of all nodes (admin, health, quotas) and one per chain (routing), each swapped
 * by reference on ranking and reload, and keeps a node's or an account's runtime state for as
 * long as its name stays in the config.
 */
export class Topology {
  #table: RoutingTable;
  readonly #byName = new Map<string, UpstreamNode>();
  /** Each chain's table and chain state (issue 26's one tracker, per chain: issue 28). */
  readonly #slots = new Map<string, ChainSlot>();
  readonly #accounts = new Map<string, ProviderAccount>();
  /** The same accounts by usage name (`account:NAME`). */
  readonly #accountsByUsage = new Map<string, ProviderAccount>();

  constructor(
    config: TopologyConfig,
    private readonly deps: {
      readonly usage: UsageProvider;
      readonly metrics: ProxyMetrics;
      readonly clock: Clock;
      readonly deadlines: DeadlineQueue;
    },
  ) {
    this.#applyChains(config.chains ?? [{ name: DEFAULT_CHAIN, paths: ['/'], hosts: [] }]);
    this.#applyAccounts(config.accounts ?? []);
    const all = config.nodes.map((node) => this.#create(node));
    this.#table = this.#publish(all);
  }

  /** The current table of every node (one property load). */
  get table(): RoutingTable {
    return this.#table;
  }

  /** A node by name. */
  node(name: string): UpstreamNode | undefined {
    return this.#byName.get(name);
  }

  /** A chain's slot by name (the routing of that chain reads its `table`). */
  slot(name: string): ChainSlot | undefined {
    return this.#slots.get(name);
  }

  /** Every chain's slot, in config order. */
  slots(): IterableIterator<ChainSlot> {
    return this.#slots.values();
  }

  /** The chain state of the first chain: the only one of a `[[nodes]]` config. */
  get chain(): ChainState {
    return this.#first().state;
  }

  /** The chain state of the chain `node` serves. */
  chainOf(node: UpstreamNode): ChainState {
    return (this.#slots.get(chainOf(node.config)) ?? this.#first()).state;
  }

  /**
   * The limits known by a usage name: a node's, or an account's (`account:NAME`) — what
   * workers and replicas split into shares and report demand for.
   */
  limited(name: string): ProviderLimits | undefined {
    return this.#byName.get(name) ?? this.#accountsByUsage.get(name);
  }

  /** A provider account by name. */
  account(name: string): ProviderAccount | undefined {
    return this.#accounts.get(name);
  }

  /** Every provider account, in config order. */
  accounts(): ProviderAccount[] {
    return [...this.#accounts.values()];
  }

  /** Re-sorts by (tier, latency EMA) from state the traffic already produced. */
  rank(): void {
    for (const slot of this.#slots.values()) slot.table = buildTable(slot.table.all, slot.state);
    this.#table = this.#slots.size === 1 ? this.#first().table : buildTable(this.#table.all);
  }

  /**
   * Applies a reloaded config: survivors keep their state under the new config, new names
   * start fresh, removed names go; chains and accounts likewise. Returns the diff and the
   * transports to close once their in-flight requests finish.
   */
  apply(config: TopologyConfig): { diff: TopologyDiff; retired: HttpTransport[] } {
    const now = this.deps.clock.now();
    const nodes = config.nodes;
    const diff = diffNodes(
      this.#table.all.map((node) => node.config),
      nodes,
    );
    const retired: HttpTransport[] = [];
    const before = new Set(this.#slots.keys());
    this.#applyChains(config.chains ?? [{ name: DEFAULT_CHAIN, paths: ['/'], hosts: [] }]);
    this.#applyAccounts(config.accounts ?? []);
    const next = nodes.map((node) => {
      const existing = this.#byName.get(node.name);
      // A node that moved to another chain starts afresh: its heads belong to the old one.
      if (existing && chainOf(existing.config) === chainOf(node)) {
        const old = existing.reconfigure(node, now);
        if (old) retired.push(old);
        existing.bill(node.account === undefined ? undefined : this.#accounts.get(node.account));
        return existing;
      }
      if (existing) this.#retire(existing, retired, before);
      return this.#create(node);
    });
    const keep = new Set(nodes.map((node) => node.name));
    for (const [name, node] of this.#byName)
      if (!keep.has(name)) this.#retire(node, retired, before);
    this.#table = this.#publish(next);
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

  #first(): ChainSlot {
    return this.#slots.values().next().value as ChainSlot;
  }

  /** Publishes the table of all nodes and, per chain, the table of its nodes. */
  #publish(all: readonly UpstreamNode[]): RoutingTable {
    for (const slot of this.#slots.values()) {
      const own = all.filter(
        (node) => (this.#slots.get(chainOf(node.config)) ?? this.#first()) === slot,
      );
      slot.table = buildTable(own, slot.state);
    }
    // One chain: its table is the table of all nodes (the same object, as before chains).
    if (this.#slots.size === 1) return this.#first().table;
    return buildTable(all);
  }

  #applyChains(chains: readonly ChainConfig[]): void {
    const keep = new Set(chains.map((chain) => chain.name));
    for (const name of this.#slots.keys()) if (!keep.has(name)) this.#slots.delete(name);
    for (const chain of chains) {
      const options = chainOptions(chain.lag);
      const slot = this.#slots.get(chain.name);
      if (slot === undefined) this.#slots.set(chain.name, new ChainSlot(chain.name, options));
      else slot.state.configure(options);
    }
    // Map order is insertion order: keep the config's order for views.
    const ordered = chains.map((chain) => [chain.name, this.#slots.get(chain.name)!] as const);
    this.#slots.clear();
    for (const [name, slot] of ordered) this.#slots.set(name, slot);
  }

  #applyAccounts(accounts: readonly AccountConfig[]): void {
    const now = this.deps.clock.now();
    const keep = new Set(accounts.map((account) => account.name));
    for (const name of this.#accounts.keys()) if (!keep.has(name)) this.#accounts.delete(name);
    this.#accountsByUsage.clear();
    for (const config of accounts) {
      const account = this.#accounts.get(config.name);
      if (account !== undefined) account.reconfigure(config, now);
      else {
        const usage = this.deps.usage.counter(accountUsageName(config.name));
        this.#accounts.set(config.name, new ProviderAccount(config, usage, this.deps.clock));
      }
      this.#accountsByUsage.set(accountUsageName(config.name), this.#accounts.get(config.name)!);
    }
  }

  #retire(node: UpstreamNode, retired: HttpTransport[], slots: ReadonlySet<string>): void {
    node.retired = true;
    retired.push(node.transport);
    this.#byName.delete(node.name);
    const chain = chainOf(node.config);
    if (slots.has(chain)) this.#slots.get(chain)?.state.forget(node.name);
    this.deps.metrics.removeNode(node.name);
  }

  #create(config: NodeConfig): UpstreamNode {
    const node = new UpstreamNode(
      config,
      this.deps.usage.counter(config.name),
      this.deps.metrics.forNode(config.name),
      this.deps,
    );
    if (config.account !== undefined) node.bill(this.#accounts.get(config.account));
    this.#byName.set(config.name, node);
    (this.#slots.get(chainOf(config)) ?? this.#first()).state.track(node.heads);
    return node;
  }
}
