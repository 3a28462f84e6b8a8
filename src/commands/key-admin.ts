/**
 * `cascade key list|revoke|budget`: the running server's client keys, changed at runtime
 * through its admin listener (no restart). Names only: no command ever prints a secret.
 */
import { fetchKeys, keyAction, type KeyRow } from '../core/index.js';
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

/** `cascade key revoke NAME`: refused at once on this server, until its secret changes. */
export async function runKeyRevoke(
  name: string,
  options: KeyAdminOptions,
  io: CommandIo,
): Promise<ExitCode> {
  const { key } = await keyAction(resolveAdminTarget(options, io), name, 'revoke');
  if (options.json) io.out(renderJson({ key }));
  else
    io.out(
      `${name} revoked: its calls are refused (401) from now on; remove its [[keys]] entry so a restart does not bring it back`,
    );
  return 0;
}

/** `cascade key budget NAME CREDITS`: a new budget for this period on, until a restart. */
export async function runKeyBudget(
  name: string,
  credits: string,
  options: KeyAdminOptions,
  io: CommandIo,
): Promise<ExitCode> {
  if (!/^\d{1,16}$/.test(credits) || !Number.isSafeInteger(Number(credits))) {
    const { UsageError } = await import('../core/index.js');
    throw new UsageError(`'${credits}' is not a credit amount`, 'a whole number, e.g. 500000');
  }
  const { key } = await keyAction(resolveAdminTarget(options, io), name, {
    budget: Number(credits),
  });
  if (options.json) io.out(renderJson({ key }));
  else
    io.out(
      `${name}: budget ${formatCredits(Number(credits))} credits (used ${formatCredits(key.used)}, resets ${key.next_reset}); set monthly_credits in its [[keys]] entry to keep it after a restart`,
    );
  return 0;
}
