/**
 * The client keys' part of `cascade quota show` and `quota reset --key` (issue 27): live from
 * the running server's admin listener when there is one, else from quotas.json, where each
 * key's usage sits beside the nodes' as a `key:NAME` entry (and its runtime revokes and budgets
 * in the changes file beside it) — or, with replicas and no server here, from Redis (the
 * fleet's usage and its runtime revokes and budgets).
 */
import { existsSync } from 'node:fs';
import {
  KEY_USAGE_PREFIX,
  UNRESOLVED_SECRET,
  UsageError,
  budgetField,
  budgetOverride,
  fetchKeys,
  resetSharedUsage,
  revokeField,
  keyAction,
  keyChangesPath,
  readKeyChanges,
  readSharedKeyChanges,
  nextReset,
  periodInForce,
  periodStart,
  readQuotaFile,
  utcDay,
  writeQuotaFile,
  type AdminTarget,
  type ClientKeyConfig,
  type Config,
  type KeyRow,
  type QuotaSnapshot,
} from '../core/index.js';

/** The admin listener of the server holding the quotas lock. */
export function lockTarget(config: Config, adminPort: number): AdminTarget {
  return { url: `http://127.0.0.1:${adminPort}`, token: config.server.adminToken };
}

/**
 * Whether the fleet's `changes` revoke key `key`. The field names the key's secret; an
 * operator's shell without the secret (key_env unset: no hash) reads any revoke of the name.
 */
function revokedIn(changes: ReadonlyMap<string, string>, key: ClientKeyConfig): boolean {
  if (key.sha256 !== UNRESOLVED_SECRET)
    return changes.get(revokeField(key.name, key.sha256)) === '1';
  const prefix = revokeField(key.name, '');
  for (const [field, value] of changes) if (field.startsWith(prefix) && value === '1') return true;
  return false;
}

/**
 * The configured keys' rows from a quotas.json snapshot, or Redis' (a past period's usage
 * counts as 0); with the fleet's runtime `changes`, its revokes and budgets.
 */
export function keyRowsFromSnapshot(
  config: Config,
  snapshot: QuotaSnapshot,
  changes: ReadonlyMap<string, string> = new Map(),
): KeyRow[] {
  const today = utcDay(new Date());
  return (config.keys?.keys ?? []).map((key) => {
    const entry = snapshot.get(`${KEY_USAGE_PREFIX}${key.name}`);
    const current =
      entry !== undefined && periodInForce(entry.periodStart, periodStart(today, key.resetDay));
    const start = current ? entry.periodStart : periodStart(today, key.resetDay);
    return {
      name: key.name,
      used: current ? entry.used : 0,
      budget:
        budgetOverride(changes.get(budgetField(key.name)), key.monthlyCredits) ??
        key.monthlyCredits ??
        null,
      reset_day: key.resetDay,
      period_start: start,
      next_reset: nextReset(today, key.resetDay),
      revoked: revokedIn(changes, key),
      in_flight: 0,
      requests: {},
    };
  });
}

/** The key rows from the server when one is reachable, else from the file. */
export async function keyRows(
  config: Config,
  quotasPath: string,
  adminPort: number | null | undefined,
): Promise<KeyRow[]> {
  if ((config.keys?.keys.length ?? 0) === 0) return [];
  if (adminPort) return (await fetchKeys(lockTarget(config, adminPort))).keys;
  return keyRowsFromSnapshot(
    config,
    await readQuotaFile(quotasPath),
    await savedChanges(quotasPath),
  );
}

/** The operator's runtime revokes and budgets, as the server saved them beside quotas.json. */
async function savedChanges(quotasPath: string): Promise<Map<string, string>> {
  const saved = await readKeyChanges(keyChangesPath(quotasPath));
  return new Map(saved.map(({ field, value }) => [field, value]));
}

/**
 * Zeroes the usage of key `name` (a configured key: the caller checks every name first):
 * through the server when one runs, else in Redis (replicas) and the file.
 */
export async function resetKey(
  config: Config,
  quotasPath: string,
  name: string,
  adminPort: number | null | undefined,
): Promise<{ row: KeyRow; where: string }> {
  if (adminPort) {
    const { key } = await keyAction(lockTarget(config, adminPort), name, 'reset');
    return { row: key, where: 'through the running server' };
  }
  // No server here: with replicas the fleet's total is in Redis (as for nodes), then the file.
  const fleet = config.cluster?.redisUrl !== undefined;
  // A mistyped --quotas would otherwise create a file no server reads and report success.
  if (!fleet && !existsSync(quotasPath))
    throw new UsageError(
      `no usage file at ${quotasPath}: nothing to reset`,
      'check --quotas (or server.quotas_path); a server writes the file at its first flush',
    );
  if (fleet) await resetSharedUsage(config, [`${KEY_USAGE_PREFIX}${name}`], new Date());
  const snapshot = await readQuotaFile(quotasPath);
  const next = new Map(snapshot);
  const entry = `${KEY_USAGE_PREFIX}${name}`;
  const key = config.keys!.keys.find((one) => one.name === name)!;
  const start = periodStart(utcDay(new Date()), key.resetDay);
  next.set(entry, { used: 0, periodStart: snapshot.get(entry)?.periodStart ?? start });
  await writeQuotaFile(quotasPath, next);
  const changes = fleet ? await readSharedKeyChanges(config) : await savedChanges(quotasPath);
  const row = keyRowsFromSnapshot(config, next, changes).find((one) => one.name === name)!;
  return {
    row,
    where: fleet ? `for every replica (in Redis) and in ${quotasPath}` : `in ${quotasPath}`,
  };
}
