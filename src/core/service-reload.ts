/**
 * Reload (SIGHUP, or the admin API): re-read the config and every price list, all or nothing.
 * One process and the primary of `--workers` both run this: the same plan
 * (service-reload-plan.ts), the same log lines, the same answer. A failure is one error line
 * and the running node set stays; a success is one line saying what changed. `[server]` and
 * `[cluster]` changes need a restart and are reported, not applied.
 */
import { keyPeriods } from './keys/key-periods.js';
import type { Logger } from 'pino';
import type { Config, LoadResult } from './config/types.js';
import { accountNameOf } from './config/accounts-section.js';
import { KEY_USAGE_PREFIX } from './config/key-exposure.js';
import { accountEntries } from './config/config-chains.js';
import type { QuotaFlusher } from './quota/quota-flusher.js';
import type { TopologyDiff } from './routing/topology.js';
import { planReload } from './service-reload-plan.js';

/** What a reload did. */
export type ReloadOutcome =
  | {
      readonly ok: true;
      readonly diff: TopologyDiff;
      /** `[server]` keys (TOML names) that changed and wait for a restart. */
      readonly needsRestart: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly string[] };

/** What a reload works on: the config in force, and how to put a new one in force. */
export interface ReloadTarget {
  /** The config in force (`[server]` and `[cluster]` as started). */
  running(): Config;
  /** Puts `next` in force: the proxy's nodes, policies and cache, or every worker's. */
  apply(next: Config): void;
  /** Keeps quotas.json to the node set in force. */
  readonly flusher: QuotaFlusher;
  /** Client keys' usage is counters in the ledger (the primary of `--workers`); default: with Redis. */
  readonly keysInLedger?: boolean;
}

/** One line per usage entry a reload removed: a node's, or a provider account's pool. */
function logRetired(logger: Logger, name: string, used: number): void {
  const account = accountNameOf(name);
  if (account === undefined)
    logger.info(
      { node: name, used },
      'node removed; its usage leaves quotas.json at the next write',
    );
  else
    logger.info(
      { account, used },
      'account removed; its usage leaves quotas.json at the next write',
    );
}

/** The answer to a reload asked while the service shuts down. */
export function reloadWhileClosing(logger: Logger): ReloadOutcome {
  logger.warn('shutting down; reload ignored');
  return { ok: false, problems: ['shutting down; reload ignored'] };
}

/**
 * Reloads `target` from `source` (which re-reads the file; absent: reloads are refused):
 * plans, logs the warnings, applies, and logs what changed and what waits for a restart.
 */
export function applyReload(
  target: ReloadTarget,
  logger: Logger,
  source: (() => LoadResult) | undefined,
): ReloadOutcome {
  const plan = planReload(target.running(), source?.());
  if (!plan.ok) {
    logger.error(
      { problems: plan.problems.length },
      `config reload failed; keeping the running config: ${plan.problems.join('; ')}`,
    );
    return plan;
  }
  for (const warning of plan.warnings) logger.warn(`config: ${warning}`);
  target.apply(plan.next);
  // Client keys' counters live in the ledger with workers or replicas on Redis: kept, not retired.
  const inLedger = target.keysInLedger ?? plan.next.cluster?.redisUrl !== undefined;
  const counted = inLedger ? keyPeriods(plan.next.keys?.keys ?? []) : [];
  // A removed key keeps what it spent (quotas.json, and its entry put back), as in one process;
  // on Redis the fleet's counter outlives the removal by itself.
  const ownLedger = target.keysInLedger === true && plan.next.cluster?.redisUrl === undefined;
  const keepAside = ownLedger ? (name: string) => name.startsWith(KEY_USAGE_PREFIX) : undefined;
  const change = target.flusher.applyNodeSet(
    [...plan.next.nodes, ...accountEntries(plan.next), ...counted],
    keepAside,
  );
  for (const retired of change.retired)
    if (keepAside?.(retired.name) !== true) logRetired(logger, retired.name, retired.used);
  const { diff, needsRestart } = plan;
  if (needsRestart.length > 0) {
    logger.warn(
      { fields: needsRestart },
      `${needsRestart.join(', ')} changed: needs restart; ignored until then`,
    );
  }
  const details = diff.changed.length > 0 ? ` (${diff.changed.join('; ')})` : '';
  const beyond = plan.beyondNodes.length > 0 ? `; ${plan.beyondNodes.join('; ')}` : '';
  logger.info(
    {
      added: diff.added,
      removed: diff.removed,
      changed: diff.changed,
      ...(plan.beyondNodes.length > 0 ? { chains_and_accounts: plan.beyondNodes } : {}),
    },
    `config reloaded: +${diff.added.length} -${diff.removed.length} ~${diff.changed.length}${details}${beyond}`,
  );
  return { ok: true, diff, needsRestart };
}
