import type { NodeConfig } from '../config/types.js';
import { QuotaFileError } from '../errors.js';
import { periodStart, utcDay } from './billing-period.js';
import { readQuotaFile, writeQuotaFile } from './quota-file.js';
import { quotaReport, type QuotaRow } from './quota-report.js';
import type { QuotaSnapshot } from './usage-ledger.js';

/**
 * Zeroes the usage of `names` in quotas.json (no server running). A corrupt file is an error,
 * except with `all`: resetting every node is the documented way out, and rebuilds the file
 * from the config.
 */
export async function resetQuotaFile(
  quotasPath: string,
  nodes: readonly NodeConfig[],
  names: readonly string[],
  all: boolean,
): Promise<QuotaRow[]> {
  let snapshot: QuotaSnapshot;
  try {
    snapshot = await readQuotaFile(quotasPath);
  } catch (err) {
    if (!(err instanceof QuotaFileError) || !all) throw err;
    snapshot = new Map();
  }
  const today = utcDay(new Date());
  const next = new Map(snapshot);
  for (const node of nodes) {
    if (!names.includes(node.name)) continue;
    next.set(node.name, {
      used: 0,
      periodStart: snapshot.get(node.name)?.periodStart ?? periodStart(today, node.resetDay),
    });
  }
  await writeQuotaFile(quotasPath, next);
  return quotaReport(nodes, (name) => next.get(name), new Date());
}
