import { accountUsageName } from '../config/accounts-section.js';
import type { AccountConfig, NodeConfig } from '../config/types.js';
import { QuotaFileError } from '../errors.js';
import { periodStart, utcDay } from './billing-period.js';
import { readQuotaFile, writeQuotaFile } from './quota-file.js';
import {
  accountQuotaReport,
  quotaReport,
  type AccountQuotaRow,
  type QuotaRow,
} from './quota-report.js';
import type { QuotaSnapshot } from './usage-ledger.js';

/**
 * Zeroes the usage of `names` in quotas.json (no server running): node names, and account
 * names for the pools of `accounts` (kept as `account:NAME`). A corrupt file is an error,
 * except with `all`: resetting everything is the documented way out, and rebuilds the file
 * from the config.
 */
export async function resetQuotaFile(
  quotasPath: string,
  nodes: readonly NodeConfig[],
  names: readonly string[],
  all: boolean,
  accounts: readonly AccountConfig[] = [],
  accountNames: readonly string[] = [],
): Promise<{ nodes: QuotaRow[]; accounts: AccountQuotaRow[] }> {
  let snapshot: QuotaSnapshot;
  try {
    snapshot = await readQuotaFile(quotasPath);
  } catch (err) {
    if (!(err instanceof QuotaFileError) || !all) throw err;
    snapshot = new Map();
  }
  const today = utcDay(new Date());
  const next = new Map(snapshot);
  const zero = (entry: string, resetDay: number) =>
    next.set(entry, {
      used: 0,
      periodStart: snapshot.get(entry)?.periodStart ?? periodStart(today, resetDay),
    });
  for (const node of nodes) if (names.includes(node.name)) zero(node.name, node.resetDay);
  for (const account of accounts)
    if (accountNames.includes(account.name)) zero(accountUsageName(account.name), account.resetDay);
  await writeQuotaFile(quotasPath, next);
  const read = (name: string) => next.get(name);
  return {
    nodes: quotaReport(nodes, read, new Date()),
    accounts: accountQuotaReport(accounts, nodes, read, new Date()),
  };
}
