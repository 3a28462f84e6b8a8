/**
 * The provider accounts' part of `cascade quota show|reset` (issue 28): each account's pool
 * (`account:NAME` in quotas.json, in Redis and in the running server's ledger) in a table of
 * its own, and which accounts a `quota reset --account NAME` names.
 */
import { UsageError, type AccountQuotaRow, type Config } from '../core/index.js';
import { formatCredits, renderTable } from './output.js';

/** A bar of 20 cells for `percent` of a limit (unmetered: the word). */
export function usageBar(percent: number | null): string {
  if (percent === null) return 'unmetered';
  const filled = Math.max(0, Math.min(20, Math.round(percent / 5)));
  return `${'█'.repeat(filled)}${'░'.repeat(20 - filled)} ${percent.toFixed(1)}%`;
}

/** The columns every pool's table ends with: what it used of what, and its billing period. */
export const POOL_COLUMNS = [
  'used',
  'spillover at',
  'monthly limit',
  'used of limit',
  'period start',
  'next reset',
  'days left',
] as const;

/** A pool's usage and period, as POOL_COLUMNS reads them (a node's or an account's row). */
export interface PoolUsage {
  readonly used: number;
  readonly threshold: number | null;
  readonly monthly_limit: number | null;
  readonly percent_used: number | null;
  readonly period_start: string;
  readonly next_reset: string;
  readonly days_left: number;
}

/** The cells of POOL_COLUMNS for one pool. */
export function poolCells(row: PoolUsage): string[] {
  return [
    formatCredits(row.used),
    formatCredits(row.threshold ?? undefined),
    formatCredits(row.monthly_limit ?? undefined),
    usageBar(row.percent_used),
    row.period_start,
    row.next_reset,
    String(row.days_left),
  ];
}

/** The accounts' table: one pool each, shared by the nodes named. */
export function renderAccountRows(rows: readonly AccountQuotaRow[]): string {
  return renderTable(
    ['account', 'nodes', ...POOL_COLUMNS],
    rows.map((row) => [row.name, row.nodes.join(', ') || '—', ...poolCells(row)]),
  );
}

/** The accounts `--account NAME…` names, checked against the config (none without the flag). */
export function accountsToReset(config: Config, asked: readonly string[] | undefined): string[] {
  if (asked === undefined) return [];
  const known = (config.accounts ?? []).map((account) => account.name);
  const unknown = asked.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new UsageError(
      `unknown account(s): ${unknown.join(', ')}`,
      known.length === 0
        ? 'this config has no [[accounts]]'
        : `known accounts: ${known.join(', ')}`,
    );
  return [...new Set(asked)];
}

/** `a, b, account shared`: what a reset zeroed, for its one-line report. */
export function describeTargets(nodes: readonly string[], accounts: readonly string[]): string {
  return [...nodes, ...accounts.map((name) => `account ${name}`)].join(', ');
}
