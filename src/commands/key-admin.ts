/**
 * `cascade key list|revoke|unrevoke|budget`: the running server's client keys, changed at
 * runtime through its admin listener (no restart) — with replicas on Redis, the fleet's. Names
 * only: no command ever prints a secret.
 */
import { fetchKeys, keyAction, type FleetWrite, type KeyRow } from '../core/index.js';
import { resolveAdminTarget, type AdminTargetOptions } from './admin-target.js';
import type { CommandIo, ExitCode } from './io.js';
import { formatCredits, renderJson, renderTable } from './output.js';

/** Flags of the `cascade key` commands that talk to the server. */
export interface KeyAdminOptions extends AdminTargetOptions {
  readonly json?: boolean | undefined;
}

/** The keys as a table: used of budget, reset, state. */
export function renderKeyRows(rows: readonly KeyRow[]): string {
  return renderTable(
    ['key', 'used', 'budget', 'period start', 'next reset', 'state', 'allowed', 'refused'],
    rows.map((row) => {
      const allowed = row.requests.allowed ?? 0;
      const refused = Object.entries(row.requests)
        .filter(([outcome]) => outcome !== 'allowed')
        .reduce((sum, [, count]) => sum + count, 0);
      return [
        row.name,
        formatCredits(row.used),
        row.budget === null ? 'no budget' : formatCredits(row.budget),
        row.period_start,
        row.next_reset,
        row.revoked ? 'revoked' : 'active',
        String(allowed),
        String(refused),
      ];
    }),
  );
}

/** `cascade key list`. */
export async function runKeyList(options: KeyAdminOptions, io: CommandIo): Promise<ExitCode> {
  const { keys } = await fetchKeys(resolveAdminTarget(options, io));
  io.out(options.json ? renderJson({ keys }) : renderKeyRows(keys));
  return 0;
}

/**
 * Where a change holds, after the server's answer: this server alone, every replica (within
 * their sync interval), or — Redis unreachable — this replica until it reaches Redis again.
 */
function reach(fleet: FleetWrite | undefined): string {
  if (fleet === undefined) return '';
  return fleet.written
    ? ` on every replica (here now, the others within ${fleet.within_ms} ms)`
    : ' on this replica only for now';
}

/** A change Redis did not take yet: said on stderr, the command still succeeds (it holds here). */
function warnUnwritten(fleet: FleetWrite | undefined, io: CommandIo): void {
  if (fleet !== undefined && !fleet.written)
    io.err(
      'warning: Redis did not take the change yet; this replica holds it (on disk too, so a restart keeps it) and sends it at each sync until Redis does, and the other replicas apply it then (see `cascade status`)',
    );
}

/**
 * A change the server could not write to disk: in force, said on stderr, exit code 1 (a script
 * must know a restart would undo it).
 */
function reportUnsaved(notSaved: string | undefined, io: CommandIo): ExitCode {
  if (notSaved === undefined) return 0;
  io.err(
    `error: the change is in force but was not saved: ${notSaved}; a restart before it is saved undoes it`,
  );
  return 1;
}

/**
 * With replicas, a change made elsewhere after this one (by when each was made) holds over it:
 * the key's row, read after the fleet's sync, then says something else than was asked.
 */
function reportOverruled(held: boolean, name: string, state: string, io: CommandIo): ExitCode {
  if (held) return 0;
  io.err(
    `error: a newer change to ${name} made on another replica holds: ${state} (changes are ordered by when they were made; see the server's log)`,
  );
  return 1;
}

/** `cascade key revoke NAME`: refused at once (every replica, with Redis), until un-revoked. */
export async function runKeyRevoke(
  name: string,
  options: KeyAdminOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const answer = await keyAction(resolveAdminTarget(options, io), name, 'revoke');
  const { key, fleet, not_saved: notSaved } = answer;
  if (options.json) io.out(renderJson(answer));
  else
    io.out(
      `${name} revoked${reach(fleet)}: its calls are refused (401)${notSaved === undefined ? ', across restarts,' : ''} until \`cascade key unrevoke ${name}\` or a new secret`,
    );
  warnUnwritten(fleet, io);
  const held = reportOverruled(key.revoked, name, 'it is not revoked', io);
  return Math.max(held, reportUnsaved(notSaved, io)) as ExitCode;
}

/** `cascade key unrevoke NAME`: takes a revoke back (every replica, with Redis). */
export async function runKeyUnrevoke(
  name: string,
  options: KeyAdminOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const answer = await keyAction(resolveAdminTarget(options, io), name, 'unrevoke');
  const { key, fleet, not_saved: notSaved } = answer;
  if (options.json) io.out(renderJson(answer));
  else io.out(`${name} is no longer revoked${reach(fleet)}: its calls are served again`);
  warnUnwritten(fleet, io);
  const held = reportOverruled(!key.revoked, name, 'it is revoked', io);
  return Math.max(held, reportUnsaved(notSaved, io)) as ExitCode;
}

/**
 * `cascade key budget NAME CREDITS|config`: a new budget for this period on (`config`: the
 * config's monthly_credits again) — across restarts (saved beside quotas.json, and with Redis
 * the fleet's), until set again or the key's monthly_credits changes in the config.
 */
export async function runKeyBudget(
  name: string,
  credits: string,
  options: KeyAdminOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const toConfig = credits === 'config';
  if (!toConfig && (!/^\d{1,16}$/.test(credits) || !Number.isSafeInteger(Number(credits)))) {
    const { UsageError } = await import('../core/index.js');
    throw new UsageError(
      `'${credits}' is not a credit amount`,
      'a whole number, e.g. 500000, or `config` for the config’s monthly_credits',
    );
  }
  const budget = toConfig ? 'config' : Number(credits);
  const answer = await keyAction(resolveAdminTarget(options, io), name, { budget });
  const { key, fleet, not_saved: notSaved } = answer;
  if (options.json) io.out(renderJson(answer));
  else {
    const amount =
      key.budget === null ? 'no budget' : `budget ${formatCredits(key.budget)} credits`;
    const keep = toConfig
      ? 'the config’s monthly_credits'
      : `it holds${notSaved === undefined ? ' across restarts' : ''} until set again or its monthly_credits changes in the config`;
    io.out(
      `${name}: ${amount}${reach(fleet)} (used ${formatCredits(key.used)}, resets ${key.next_reset}); ${keep}`,
    );
  }
  warnUnwritten(fleet, io);
  const held = toConfig || key.budget === budget;
  const overruled = reportOverruled(held, name, `its budget is ${key.budget ?? 'none'}`, io);
  return Math.max(overruled, reportUnsaved(notSaved, io)) as ExitCode;
}
