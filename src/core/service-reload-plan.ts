/**
 * The reload plan: what a freshly read config would change in the running one, decided once
 * and the same way whether one process serves or a primary runs workers. Pure: it reads no
 * file and logs nothing; service-reload.ts logs it and puts it in force.
 */
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

/**
 * Plans a reload of `running` from `loaded` (the file read again; undefined: there is no file).
 * `[server]` and `[cluster]` apply at startup only, so they are kept and their changes listed.
 */
export function planReload(running: Config, loaded: LoadResult | undefined): ReloadPlan {
  if (loaded === undefined) return { ok: false, problems: [NO_CONFIG_FILE] };
  if (loaded.config === undefined) return { ok: false, problems: loaded.errors.map(formatProblem) };
  const fresh = loaded.config;
  const needsRestart = changedServerFields(running.server, fresh.server).map(
    (key) => `server.${serverKeyOf(key)}`,
  );
  if (JSON.stringify(running.cluster ?? null) !== JSON.stringify(fresh.cluster ?? null))
    needsRestart.push('[cluster]');
  return {
    ok: true,
    next: { ...fresh, server: running.server, cluster: running.cluster },
    diff: diffNodes(running.nodes, fresh.nodes),
    needsRestart,
    warnings: loaded.warnings.map(formatProblem),
  };
}
