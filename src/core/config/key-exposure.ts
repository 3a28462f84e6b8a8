/**
 * Open by default, loud when exposed (issue 27): a listener other machines can reach, with no
 * key required, lets anyone who finds the URL spend every credit the team pays for. That is a
 * warning (`serve` and `validate-config` print it), not an error: a private network or a
 * gateway in front may be exactly what the operator wants.
 */
import type { ClientKeyConfig, KeysConfig } from './key-types.js';
import type { ProblemList } from './problem-list.js';
import { isLoopback } from './server-section.js';
import type { ClusterConfig, ServerConfig } from './types.js';

/** The warning for a listener on `host` that takes keyless calls, or undefined when none. */
export function exposureWarning(
  host: string,
  requireKey: boolean,
): { message: string; hint: string } | undefined {
  if (requireKey || isLoopback(host)) return undefined;
  return {
    message: `the listener on ${host} is reachable from other machines and takes calls without a client key: anyone who finds the URL can spend every node's credits`,
    hint: 'add [[keys]] and set server.require_key = true (README, "Client keys"), or bind 127.0.0.1',
  };
}

/** Checks `require_key` against the keys there are, and warns when the listener is exposed. */
export function checkKeyExposure(
  server: ServerConfig,
  keys: KeysConfig | undefined,
  file: string,
  problems: ProblemList,
): void {
  const requireKey = server.requireKey === true;
  if (requireKey && (keys === undefined || keys.keys.length === 0) && keys?.file === undefined) {
    problems.error(
      file,
      'server.require_key',
      'require_key = true but no [[keys]] are configured, so every call would be refused',
      'add a key (cascade key new NAME prints the [[keys]] lines), or set require_key = false',
    );
  }
  const warning = exposureWarning(server.host, requireKey);
  if (warning !== undefined) problems.warn(file, 'server.host', warning.message, warning.hint);
}

/** Where a key's usage sits in quotas.json, beside the nodes' (old files read unchanged). */
export const KEY_USAGE_PREFIX = 'key:';

/**
 * What keys cannot do yet, refused rather than half-done. Replicas on Redis share a key's
 * `monthly_credits` budget as they share nodes' usage (the same ledger, sync and heal); its
 * rate and concurrency limits live in one process, so each replica would allow the whole
 * limit. Several workers of one machine share no key limit yet. Node names that look like a
 * key's usage entry in quotas.json are refused too.
 */
export function checkKeyLimitsScope(
  keys: KeysConfig | undefined,
  cluster: ClusterConfig | undefined,
  nodeNames: readonly string[],
  file: string,
  problems: ProblemList,
): void {
  for (const name of nodeNames) {
    if (name.startsWith(KEY_USAGE_PREFIX))
      problems.error(
        file,
        'nodes',
        `node name '${name}' starts with '${KEY_USAGE_PREFIX}', which quotas.json keeps for client keys`,
        'rename the node',
      );
  }
  if (cluster === undefined) return;
  if (cluster.workers > 1) {
    const limited = (keys?.keys ?? []).find((key) => hasSharedLimit(key));
    if (limited !== undefined)
      problems.error(
        file,
        'cluster',
        `key '${limited.name}' has per-key limits (rps_limit, max_concurrent, per_ip_rps or monthly_credits), which are not shared between workers yet`,
        'run one process per machine (cluster.workers = 1; replicas on Redis share monthly_credits), or keep only methods/origins/params/max_batch_size/max_subscriptions on them',
      );
    return;
  }
  if (cluster.redisUrl === undefined) return;
  const limited = (keys?.keys ?? []).find((key) => hasRateLimit(key));
  if (limited !== undefined)
    problems.error(
      file,
      'cluster',
      `key '${limited.name}' has rps_limit, max_concurrent or per_ip_rps, which are not shared between replicas yet (monthly_credits is)`,
      'run one replica for keys with rate or concurrency limits, or keep monthly_credits/methods/origins/params/max_batch_size/max_subscriptions on them',
    );
}

/** Whether a key has a limit that several processes would each enforce in full. */
export function hasSharedLimit(key: ClientKeyConfig): boolean {
  return hasRateLimit(key) || key.monthlyCredits !== undefined;
}

/** Whether a key has a rate or concurrency limit (kept in one process, even with replicas). */
export function hasRateLimit(key: ClientKeyConfig): boolean {
  return (
    key.rpsLimit !== undefined || key.maxConcurrent !== undefined || key.perIpRps !== undefined
  );
}
