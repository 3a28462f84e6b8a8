/**
 * `[[accounts]]` (issue 28): a provider account bills one credit pool and enforces one rate
 * limit across every endpoint the team uses with it — Alchemy's or Helius' plan covers all of
 * a team's chains. Nodes name their account; the pool and the limits are then shared by all
 * of them, on every chain, on top of each node's own limits.
 */
import type { ProblemList } from './problem-list.js';
import { FieldReader, describeType, isTable } from './toml-fields.js';
import type { AccountConfig } from './types.js';

const ACCOUNT_KEYS = [
  'name',
  'monthly_limit',
  'reset_day',
  'rps_limit',
  'max_concurrent',
  'spillover_percent',
] as const;
const U32_MAX = 0xffffffff;
/** The account's share of `monthly_limit` spent before its nodes spill, when not set. */
export const DEFAULT_ACCOUNT_SPILLOVER_PERCENT = 95;

function readAccount(
  table: Record<string, unknown>,
  index: number,
  file: string,
  problems: ProblemList,
): AccountConfig | undefined {
  const before = problems.errors.length;
  const r = new FieldReader(table, file, `accounts[${index}]`, problems);
  const name = r.string('name', true, 'every account needs a unique name; nodes name it');
  const monthly = r.integer('monthly_limit', {
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    required: true,
    hint: "the plan's credits per billing period, shared by every node of the account; 0 means unmetered",
  });
  const resetDay = r.integer('reset_day', {
    min: 1,
    max: 31,
    required: false,
    hint: "the day of the month the plan's usage resets (default 1)",
  });
  const rps = r.integer('rps_limit', {
    min: 1,
    max: U32_MAX,
    required: false,
    hint: "the plan's requests per second across all its endpoints; omit the key for no limit",
  });
  const concurrent = r.integer('max_concurrent', {
    min: 1,
    max: U32_MAX,
    required: false,
    hint: 'requests in flight at once across all its endpoints; omit the key for no limit',
  });
  const spillover = r.integer('spillover_percent', {
    min: 1,
    max: 100,
    required: false,
    hint: `the share of monthly_limit to spend before every node of the account spills over (default ${DEFAULT_ACCOUNT_SPILLOVER_PERCENT})`,
  });
  r.rejectUnknown(ACCOUNT_KEYS);
  if (name !== undefined && name.trim() === '')
    problems.error(file, `accounts[${index}].name`, 'must not be empty', 'name the account');
  if (problems.errors.length > before || !name || monthly === undefined) return undefined;
  const spilloverPercent = spillover ?? DEFAULT_ACCOUNT_SPILLOVER_PERCENT;
  const monthlyLimit = monthly === 0 ? undefined : monthly;
  return {
    name,
    monthlyLimit,
    resetDay: resetDay ?? 1,
    rpsLimit: rps ?? Infinity,
    maxConcurrent: concurrent ?? Infinity,
    spilloverPercent,
    spilloverThreshold:
      monthlyLimit === undefined
        ? Infinity
        : Number((BigInt(monthlyLimit) * BigInt(spilloverPercent)) / 100n),
  };
}

/** Validates `[[accounts]]`; undefined when the config has none. */
export function readAccountsSection(
  doc: Record<string, unknown>,
  file: string,
  problems: ProblemList,
): AccountConfig[] | undefined {
  const section = doc.accounts;
  if (section === undefined) return undefined;
  if (!Array.isArray(section)) {
    problems.error(
      file,
      'accounts',
      `must be an array of tables, got ${describeType(section)}`,
      'write each account as [[accounts]]',
    );
    return undefined;
  }
  const accounts: AccountConfig[] = [];
  const seen = new Map<string, number>();
  section.forEach((entry: unknown, index) => {
    if (!isTable(entry)) {
      problems.error(
        file,
        `accounts[${index}]`,
        `must be a table, got ${describeType(entry)}`,
        'write each account as [[accounts]]',
      );
      return;
    }
    const account = readAccount(entry, index, file, problems);
    if (account === undefined) return;
    const first = seen.get(account.name);
    if (first !== undefined) {
      problems.error(
        file,
        `accounts[${index}].name`,
        `two accounts share the name '${account.name}' (accounts[${first}] and accounts[${index}])`,
        'account names must be unique; usage in quotas.json is keyed by them',
      );
      return;
    }
    seen.set(account.name, index);
    accounts.push(account);
  });
  return accounts;
}

/** The names `[[accounts]]` entries give themselves, valid or not (nodes' links are checked against them). */
export function writtenAccountNames(doc: Record<string, unknown>): Set<string> {
  const section = doc.accounts;
  if (!Array.isArray(section)) return new Set();
  return new Set(
    section.flatMap((entry: unknown) =>
      isTable(entry) && typeof entry.name === 'string' ? [entry.name] : [],
    ),
  );
}

/** Usage-ledger name of an account's pool (quotas.json, Redis): never a node's name. */
export function accountUsageName(name: string): string {
  return `account:${name}`;
}

/** The account a usage-ledger name is the pool of, or undefined for a node's (or a key's) name. */
export function accountNameOf(usageName: string): string | undefined {
  const prefix = accountUsageName('');
  return usageName.startsWith(prefix) ? usageName.slice(prefix.length) : undefined;
}
