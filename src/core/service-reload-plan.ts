/**
 * The reload plan: what a freshly read config would change in the running one, decided once
 * and the same way whether one process serves or a primary runs workers. Pure: it reads no
 * file and logs nothing; service-reload.ts logs it and puts it in force.
 */
import { chainsOf } from './config/config-chains.js';
import { serverKeyOf } from './config/server-section.js';
import { formatProblem, type Config, type LoadResult } from './config/types.js';
import { diffNodes, type TopologyDiff } from './routing/topology.js';

/** Why a reload is refused when there is no file behind the running config. */
export const NO_CONFIG_FILE =
  'there is no config file to reload (the demo runs built-in mock nodes)';

/** What a reload would do, or why it cannot. */
export type ReloadPlan =
  | {
      readonly ok: true;
      /** The config to put in force: the new file's, with `[server]` and `[cluster]` as running. */
      readonly next: Config;
      readonly diff: TopologyDiff;
      /**
       * Chains, accounts and client keys added, removed or changed (`chain base added`,
       * `account a: rps_limit`, `key web: secret`).
       */
      readonly beyondNodes: readonly string[];
      /** `[server]` keys (TOML names, `server.x`) and `[cluster]` that changed and wait for a restart. */
      readonly needsRestart: readonly string[];
      /** The new file's warnings, one formatted line each. */
      readonly warnings: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Arrays compare by element ([server] holds string lists); everything else by value. */
function sameValue(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b)
    ? a.length === b.length && a.every((item, i) => item === b[i])
    : a === b;
}

/** The `[server]` fields (camelCase) whose value differs, in the running config's key order. */
export function changedServerFields(before: Config['server'], after: Config['server']): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<
    keyof Config['server']
  >;
  return [...keys].filter((key) => !sameValue(before[key], after[key]));
}

const CHAIN_FIELDS = {
  paths: 'paths',
  hosts: 'hosts',
  lag: 'lag settings',
  cache: 'cache',
  routing: 'routing',
} as const;
const ACCOUNT_FIELDS = {
  monthlyLimit: 'monthly_limit',
  resetDay: 'reset_day',
  rpsLimit: 'rps_limit',
  maxConcurrent: 'max_concurrent',
  spilloverPercent: 'spillover_percent',
} as const;

/** A key's fields by TOML name; a new secret reads `secret`, never its value or hash. */
const KEY_FIELDS = {
  sha256: 'secret',
  allow: 'methods',
  deny: 'methods',
  rpsLimit: 'rps_limit',
  maxConcurrent: 'max_concurrent',
  monthlyCredits: 'monthly_credits',
  resetDay: 'reset_day',
  origins: 'origins',
  perIpRps: 'per_ip_rps',
  maxBatchSize: 'max_batch_size',
  maxSubscriptions: 'max_subscriptions',
  chains: 'chains',
  params: 'params',
  requiredFilters: 'required_filters',
  maxAnswerBytes: 'max_answer_bytes',
} as const;

/** `kind NAME added|removed`, and `kind NAME: field, field` for the named entries that changed. */
function diffNamed<T extends { readonly name: string }>(
  kind: string,
  before: readonly T[],
  after: readonly T[],
  fields: Partial<Record<keyof T, string>>,
): string[] {
  const old = new Map(before.map((entry) => [entry.name, entry]));
  const kept = new Set(after.map((entry) => entry.name));
  const lines: string[] = [];
  for (const entry of after) {
    const previous = old.get(entry.name);
    if (previous === undefined) {
      lines.push(`${kind} ${entry.name} added`);
      continue;
    }
    const changed = (Object.keys(fields) as (keyof T)[]).filter(
      (key) =>
        JSON.stringify(previous[key] ?? null, mapsAsEntries) !==
        JSON.stringify(entry[key] ?? null, mapsAsEntries),
    );
    if (changed.length > 0)
      lines.push(
        `${kind} ${entry.name}: ${[...new Set(changed.map((key) => fields[key]))].join(', ')}`,
      );
  }
  for (const entry of before)
    if (!kept.has(entry.name)) lines.push(`${kind} ${entry.name} removed`);
  return lines;
}

/** JSON.stringify's replacer for configs holding Maps (routing and cache method tables). */
function mapsAsEntries(_key: string, value: unknown): unknown {
  return value instanceof Map ? [...value] : value;
}

/** `server` with `from`'s chain-state settings (or none, when `from` has none). */
function withChainOf(server: Config['server'], from: Config['server']): Config['server'] {
  const { chain: _running, ...rest } = server;
  return from.chain === undefined ? rest : { ...rest, chain: from.chain };
}

/**
 * Plans a reload of `running` from `loaded` (the file read again; undefined: there is no file).
 * `[server]` and `[cluster]` apply at startup only, so they are kept and their changes listed —
 * except `[server]`'s chain-state keys, which reload as the implicit chain's settings.
 */
export function planReload(running: Config, loaded: LoadResult | undefined): ReloadPlan {
  if (loaded === undefined) return { ok: false, problems: [NO_CONFIG_FILE] };
  if (loaded.config === undefined) return { ok: false, problems: loaded.errors.map(formatProblem) };
  const fresh = loaded.config;
  // [server]'s chain-state keys (max_lag, head_*, expect_chain, max_logs_block_range) are the
  // implicit chain's settings: they reload as a [[chains]] entry's do, listed as its "lag
  // settings" — not as a [server] change waiting for a restart.
  const needsRestart = changedServerFields(running.server, fresh.server)
    .filter((key) => key !== 'chain')
    .map((key) => `server.${serverKeyOf(key)}`);
  const sameChain =
    JSON.stringify(running.server.chain ?? null) === JSON.stringify(fresh.server.chain ?? null);
  const server = sameChain ? running.server : withChainOf(running.server, fresh.server);
  if (JSON.stringify(running.cluster ?? null) !== JSON.stringify(fresh.cluster ?? null))
    needsRestart.push('[cluster]');
  return {
    ok: true,
    next: { ...fresh, server, cluster: running.cluster },
    diff: diffNodes(running.nodes, fresh.nodes),
    beyondNodes: [
      ...diffNamed('chain', chainsOf(running), chainsOf(fresh), CHAIN_FIELDS),
      ...diffNamed('account', running.accounts ?? [], fresh.accounts ?? [], ACCOUNT_FIELDS),
      ...diffNamed('key', running.keys?.keys ?? [], fresh.keys?.keys ?? [], KEY_FIELDS),
    ],
    needsRestart,
    warnings: loaded.warnings.map(formatProblem),
  };
}
