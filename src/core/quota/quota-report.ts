import { accountUsageName } from '../config/accounts-section.js';
import type { AccountConfig, NodeConfig } from '../config/types.js';
import { daysUntil, nextReset, periodStart, utcDay } from './billing-period.js';

/** One node's credit position, as `cascade quota show` and the admin route report it. */
export interface QuotaRow {
  readonly name: string;
  readonly tier: number;
  readonly used: number;
  /** Credits the cache and coalescing saved this node in the period. */
  readonly saved: number;
  /** Usage past which the node is skipped; null when unmetered. */
  readonly threshold: number | null;
  /** Credits per period; null when unmetered. */
  readonly monthly_limit: number | null;
  /** used / monthly_limit × 100, null when unmetered. */
  readonly percent_used: number | null;
  readonly reset_day: number;
  readonly period_start: string;
  readonly next_reset: string;
  readonly days_left: number;
}

/** Usage of one node as the report needs it. */
export interface UsageReading {
  readonly used: number;
  readonly periodStart: string | undefined;
  readonly saved?: number | undefined;
}

/** Builds the report rows for `nodes` (config order) from their usage on `today` (UTC). */
export function quotaReport(
  nodes: readonly NodeConfig[],
  usage: (name: string) => UsageReading | undefined,
  today: Date,
): QuotaRow[] {
  const day = utcDay(today);
  return nodes.map((node) => {
    const reading = usage(node.name);
    const used = reading?.used ?? 0;
    const start = reading?.periodStart ?? periodStart(day, node.resetDay);
    const next = nextReset(day, node.resetDay);
    const limit = node.monthlyLimit ?? null;
    return {
      name: node.name,
      tier: node.tier,
      used,
      saved: reading?.saved ?? 0,
      threshold: Number.isFinite(node.spilloverThreshold) ? node.spilloverThreshold : null,
      monthly_limit: limit,
      percent_used: limit === null ? null : Math.round((used / limit) * 10_000) / 100,
      reset_day: node.resetDay,
      period_start: start,
      next_reset: next,
      days_left: daysUntil(day, next),
    };
  });
}

/** One provider account's pool, as `cascade quota show` and the admin route report it. */
export interface AccountQuotaRow {
  readonly name: string;
  /** The nodes billed to it, config order. */
  readonly nodes: readonly string[];
  readonly used: number;
  /** Usage past which every node of the account is skipped; null when unmetered. */
  readonly threshold: number | null;
  readonly monthly_limit: number | null;
  /** used / monthly_limit × 100, null when unmetered. */
  readonly percent_used: number | null;
  readonly reset_day: number;
  readonly period_start: string;
  readonly next_reset: string;
  readonly days_left: number;
}

/**
 * The rows of `accounts` (config order) from their pools' usage on `today` (UTC); `usage`
 * reads a pool by its ledger name (`account:NAME`).
 */
export function accountQuotaReport(
  accounts: readonly AccountConfig[],
  nodes: readonly Pick<NodeConfig, 'name' | 'account'>[],
  usage: (name: string) => UsageReading | undefined,
  today: Date,
): AccountQuotaRow[] {
  const day = utcDay(today);
  return accounts.map((account) => {
    const reading = usage(accountUsageName(account.name));
    const used = reading?.used ?? 0;
    const next = nextReset(day, account.resetDay);
    const limit = account.monthlyLimit ?? null;
    return {
      name: account.name,
      nodes: nodes.filter((node) => node.account === account.name).map((node) => node.name),
      used,
      threshold: Number.isFinite(account.spilloverThreshold) ? account.spilloverThreshold : null,
      monthly_limit: limit,
      percent_used: limit === null ? null : Math.round((used / limit) * 10_000) / 100,
      reset_day: account.resetDay,
      period_start: reading?.periodStart ?? periodStart(day, account.resetDay),
      next_reset: next,
      days_left: daysUntil(day, next),
    };
  });
}
