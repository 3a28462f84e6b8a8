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
  /** `[[keys]]` entries written in the config, counting those whose problems dropped them. */
  declared = keys?.keys.length ?? 0,
): void {
  const requireKey = server.requireKey === true;
  for (const key of keys?.keys ?? []) {
    if (key.maxBatchSize !== undefined && key.maxBatchSize > server.maxBatchSize)
      problems.warn(
        file,
        'keys',
        `key '${key.name}' has max_batch_size = ${key.maxBatchSize}, above [server] max_batch_size = ${server.maxBatchSize}: the server's limit refuses bigger batches first`,
        `lower the key's max_batch_size to at most ${server.maxBatchSize}, or raise the server's`,
      );
  }
  const none = (keys === undefined || keys.keys.length === 0) && declared === 0;
  // Entries that failed to load have their own problems listed: no second, wrong one here.
  if (requireKey && none && keys?.file === undefined) {
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
 * Per-key limits with several processes. Workers (`--workers`) and replicas on Redis each
 * enforce a whole-number share of a key's `rps_limit`, `max_concurrent` and `per_ip_rps`,
 * split by demand as nodes' limits are; a limit below the number of workers leaves some worker
 * without any share at a time (its calls are refused until the next split moves some its way),
 * which the operator hears of as a warning. Node names that look like a key's usage entry in
 * quotas.json are refused.
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
  const workers = cluster?.workers ?? 1;
  if (workers <= 1) return;
  for (const [index, key] of (keys?.keys ?? []).entries()) {
    const small = smallLimits(key, workers);
    if (small.length === 0) continue;
    problems.warn(
      file,
      `keys[${index}]`,
      `key '${key.name}' has ${small.join(', ')} below the ${workers} workers that split it: each worker enforces a whole-number share, so at any moment some worker has none and refuses the key's calls until demand moves a share its way`,
      `raise the limit to at least ${workers}, or serve the key with fewer workers`,
    );
  }
}

/** The limits of `key` smaller than the number of processes sharing them (`name = value`). */
function smallLimits(key: ClientKeyConfig, processes: number): string[] {
  const limits: Array<[string, number | undefined]> = [
    ['rps_limit', key.rpsLimit],
    ['max_concurrent', key.maxConcurrent],
    ['per_ip_rps', key.perIpRps],
  ];
  return limits
    .filter(([, value]) => value !== undefined && value < processes)
    .map(([name, value]) => `${name} = ${value}`);
}
