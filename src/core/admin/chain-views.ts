/**
 * The chains and provider accounts of GET /admin/nodes (issue 28), built from the node rows:
 * a chain's state is the /health rule over its own rows, and an account's traffic is its
 * nodes' traffic — every permit and token an account node takes is the account's too, so the
 * sums of its nodes' rows are the account's own figures, in one process and across workers.
 */
import type { AccountConfig, ChainConfig } from '../config/types.js';
import { nextReset } from '../quota/billing-period.js';
import type { NodeView } from './node-view.js';

/** One chain of GET /admin/nodes. */
export interface ChainView {
  readonly name: string;
  readonly paths: readonly string[];
  readonly hosts: readonly string[];
  /** As /health judges it: critical with no active node, degraded with some, else ok. */
  readonly status: 'ok' | 'degraded' | 'critical';
  /** Nodes neither penalized nor cordoned. */
  readonly active_nodes: number;
  readonly total_nodes: number;
}

/** One provider account of GET /admin/nodes. */
export interface AccountView {
  readonly name: string;
  /** Its nodes, config order. */
  readonly nodes: readonly string[];
  /** Attempts in the last second, all its nodes together. */
  readonly rps: number;
  readonly rps_limit: number | null;
  readonly in_flight: number;
  readonly max_concurrent: number | null;
  /** The pool's usage this billing period. */
  readonly credits_used: number;
  /** Usage past which every node of the account is skipped; null when unmetered. */
  readonly spillover_threshold: number | null;
  readonly monthly_limit: number | null;
  readonly reset_day: number;
  readonly next_reset: string;
  readonly requests_last_minute: number;
  readonly failures_last_minute: number;
}

/** What a chained document adds to the node rows. */
export interface ChainParts {
  readonly chains?: readonly ChainView[];
  readonly accounts?: readonly AccountView[];
}

const finite = (value: number): number | null => (Number.isFinite(value) ? value : null);

function chainView(chain: ChainConfig, rows: readonly NodeView[]): ChainView {
  const own = rows.filter((row) => row.chain === chain.name);
  const active = own.filter((row) => row.state !== 'penalized' && row.state !== 'cordoned').length;
  return {
    name: chain.name,
    paths: chain.paths,
    hosts: chain.hosts,
    status: active === 0 ? 'critical' : active < own.length ? 'degraded' : 'ok',
    active_nodes: active,
    total_nodes: own.length,
  };
}

function accountView(
  account: AccountConfig,
  rows: readonly NodeView[],
  used: number,
  today: Date,
): AccountView {
  const own = rows.filter((row) => row.account === account.name);
  const sum = (pick: (row: NodeView) => number) => own.reduce((total, row) => total + pick(row), 0);
  return {
    name: account.name,
    nodes: own.map((row) => row.name),
    rps: sum((row) => row.rps),
    rps_limit: finite(account.rpsLimit),
    in_flight: sum((row) => row.in_flight),
    max_concurrent: finite(account.maxConcurrent),
    credits_used: used,
    spillover_threshold: finite(account.spilloverThreshold),
    monthly_limit: account.monthlyLimit ?? null,
    reset_day: account.resetDay,
    next_reset: nextReset(today, account.resetDay),
    requests_last_minute: sum((row) => row.requests_last_minute),
    failures_last_minute: sum((row) => row.failures_last_minute),
  };
}

/**
 * The chains (with `[[chains]]`) and accounts (with `[[accounts]]`) of a document whose node
 * rows are `rows`; nothing for a plain config. `used` reads an account's pool by its name.
 */
export function chainParts(
  config: {
    readonly chains?: readonly ChainConfig[];
    readonly accounts?: readonly AccountConfig[];
  },
  rows: readonly NodeView[],
  used: (account: string) => number,
  today: Date,
): ChainParts {
  const accounts = config.accounts ?? [];
  return {
    ...(config.chains === undefined
      ? {}
      : { chains: config.chains.map((chain) => chainView(chain, rows)) }),
    ...(accounts.length === 0
      ? {}
      : {
          accounts: accounts.map((account) =>
            accountView(account, rows, used(account.name), today),
          ),
        }),
  };
}
