/**
 * GET /health for a config with `[[chains]]` or `[[accounts]]` (issue 28): each node says its
 * chain and account, each chain gets its own status (computed as the overall one is, from its
 * own nodes) and each account its pool. A plain `[[nodes]]` config keeps the report as it was,
 * key for key — monitors that parse it see nothing new.
 */
import type { AccountConfig, ChainConfig, NodeConfig } from '../config/types.js';
import { nextReset } from '../quota/billing-period.js';
import {
  summarize,
  type AccountHealth,
  type ChainHealth,
  type HealthReport,
  type NodeHealth,
} from './health.js';

/** The parts of a config the chained report reads. */
export interface ChainedConfig {
  readonly nodes: readonly NodeConfig[];
  readonly chains?: readonly ChainConfig[] | undefined;
  readonly accounts?: readonly AccountConfig[] | undefined;
}

const orNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

/** A node entry with its chain (with `[[chains]]`) and account (when it names one) after its tier. */
function labelled(entry: NodeHealth, config: NodeConfig | undefined, chains: boolean): NodeHealth {
  const chain = chains && config?.chain !== undefined ? { chain: config.chain } : {};
  const account = config?.account !== undefined ? { account: config.account } : {};
  if (!('chain' in chain) && !('account' in account)) return entry;
  const { name, tier, ...rest } = entry;
  return { name, tier, ...chain, ...account, ...rest };
}

function chainHealth(chain: ChainConfig, nodes: readonly NodeHealth[]): ChainHealth {
  const own = summarize(nodes.filter((node) => node.chain === chain.name));
  return {
    name: chain.name,
    paths: chain.paths,
    hosts: chain.hosts,
    status: own.status,
    active_nodes: own.active_nodes,
    total_nodes: own.total_nodes,
  };
}

/** An account's pool as /health shows it. */
export function accountHealth(
  account: AccountConfig,
  nodes: readonly NodeConfig[],
  used: number,
  today: Date,
): AccountHealth {
  return {
    name: account.name,
    used,
    quota: account.monthlyLimit ?? null,
    threshold: orNull(account.spilloverThreshold),
    rps_limit: orNull(account.rpsLimit),
    max_concurrent: orNull(account.maxConcurrent),
    reset_day: account.resetDay,
    next_reset: nextReset(today, account.resetDay),
    nodes: nodes.filter((node) => node.account === account.name).map((node) => node.name),
  };
}

/**
 * `report` with chains and accounts: unchanged (the same object) for a config that has
 * neither. `used` reads an account's pool by account name.
 */
export function withChainsAndAccounts(
  report: HealthReport,
  config: ChainedConfig,
  used: (account: string) => number,
  today: Date,
): HealthReport {
  const chains = config.chains;
  const accounts = config.accounts ?? [];
  if (chains === undefined && accounts.length === 0) return report;
  const byName = new Map(config.nodes.map((node) => [node.name, node]));
  const nodes = report.nodes.map((entry) =>
    labelled(entry, byName.get(entry.name), chains !== undefined),
  );
  return {
    ...report,
    nodes,
    ...(chains === undefined ? {} : { chains: chains.map((chain) => chainHealth(chain, nodes)) }),
    ...(accounts.length === 0
      ? {}
      : {
          accounts: accounts.map((account) =>
            accountHealth(account, config.nodes, used(account.name), today),
          ),
        }),
  };
}
