/**
 * Reload (SIGHUP, or the admin API): re-read the config and every price list, all or nothing.
 * A failure is one error line and the running node set stays; a success is one line saying
 * what changed. `[server]` changes need a restart and are reported, not applied.
 */
import type { Logger } from 'pino';
import { serverKeyOf } from './config/server-section.js';
import { formatProblem, type LoadResult } from './config/types.js';
import type { ProxyServer } from './http/server.js';
import type { QuotaFlusher } from './quota/quota-flusher.js';
import type { TopologyDiff } from './routing/topology.js';

/** What a reload did. */
export type ReloadOutcome =
  | {
      readonly ok: true;
      readonly diff: TopologyDiff;
      /** `[server]` keys (TOML names) that changed and wait for a restart. */
      readonly needsRestart: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Applies a reload to the running server; `source` re-reads the config (absent: refused). */
export function applyReload(
  server: ProxyServer,
  flusher: QuotaFlusher,
  logger: Logger,
  source: (() => LoadResult) | undefined,
): ReloadOutcome {
  if (source === undefined) {
    const why = 'there is no config file to reload (the demo runs built-in mock nodes)';
    logger.error(`config reload failed; keeping the running config: ${why}`);
    return { ok: false, problems: [why] };
  }
  const result = source();
  if (!result.config) {
    const problems = result.errors.map(formatProblem);
    logger.error(
      { problems: problems.length },
      `config reload failed; keeping the running config: ${problems.join('; ')}`,
    );
    return { ok: false, problems };
  }
  for (const warning of result.warnings) logger.warn(`config: ${formatProblem(warning)}`);
  const clusterChanged =
    JSON.stringify(server.config.cluster ?? null) !== JSON.stringify(result.config.cluster ?? null);
  const { diff, serverChanged } = server.reload(result.config);
  const change = flusher.applyNodeSet(server.nodes());
  for (const retired of change.retired) {
    logger.info(
      { node: retired.name, used: retired.used },
      'node removed; its usage leaves quotas.json at the next write',
    );
  }
  const needsRestart = serverChanged.map((key) => `server.${serverKeyOf(key)}`);
  if (clusterChanged) needsRestart.push('[cluster]');
  if (needsRestart.length > 0) {
    logger.warn(
      { fields: needsRestart },
      `${needsRestart.join(', ')} changed: needs restart; ignored until then`,
    );
  }
  const details = diff.changed.length > 0 ? ` (${diff.changed.join('; ')})` : '';
  logger.info(
    { added: diff.added, removed: diff.removed, changed: diff.changed },
    `config reloaded: +${diff.added.length} -${diff.removed.length} ~${diff.changed.length}${details}`,
  );
  return { ok: true, diff, needsRestart };
}
