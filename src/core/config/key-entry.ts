/**
 * One `[[keys]]` entry (issue 27), read into a ClientKeyConfig: its name, secret
 * (key-secret.ts), method globs, limits, budget, origins, param and heavy-read guards, chains,
 * every problem named by its field.
 */
import { readHeavyReadFields } from './heavy-read-fields.js';
import type { ClientKeyConfig } from './key-types.js';
import { readSecret } from './key-secret.js';
import { readOriginList } from './origin-list.js';
import type { ProblemList } from './problem-list.js';
import { FieldReader, describeType, isTable, type Table } from './toml-fields.js';

const KEY_FIELDS = [
  'name',
  'key_sha256',
  'key_env',
  'methods',
  'rps_limit',
  'max_concurrent',
  'monthly_credits',
  'reset_day',
  'origins',
  'per_ip_rps',
  'max_batch_size',
  'max_subscriptions',
  'params',
  'chains',
  'required_filters',
  'max_answer_bytes',
] as const;

/** What a key's name may be: it appears in metric labels, logs and URLs of the admin API. */
export const KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const GLOB_PATTERN = /^!?[A-Za-z0-9_*.:-]+$/;

function stringList(
  value: unknown,
  file: string,
  at: string,
  problems: ProblemList,
  hint: string,
): string[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.error(file, at, `must be a list of strings, got ${describeType(value)}`, hint);
    return undefined;
  }
  const wrong = value.findIndex((item) => typeof item !== 'string');
  if (wrong >= 0) {
    const item: unknown = value[wrong];
    problems.error(file, `${at}[${wrong}]`, `must be a string, got ${describeType(item)}`, hint);
    return undefined;
  }
  return value as string[];
}

function readParamGuards(
  value: unknown,
  file: string,
  at: string,
  problems: ProblemList,
): Record<string, readonly string[]> | undefined {
  if (value === undefined) return {};
  const hint =
    'e.g. params = { getProgramAccounts = ["TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"] }';
  if (!isTable(value)) {
    problems.error(file, at, `must be a table, got ${describeType(value)}`, hint);
    return undefined;
  }
  const guards: Record<string, readonly string[]> = {};
  for (const [method, allowed] of Object.entries(value)) {
    const list = stringList(allowed, file, `${at}.${method}`, problems, hint);
    if (list === undefined) return undefined;
    guards[method] = list;
  }
  return guards;
}

/** Reads the `[[keys]]` entry at `at`; undefined when it has problems (listed). */
export function readKey(
  entry: Table,
  at: string,
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
  /** Operator commands: an unset `key_env` variable is fine (key-secret.ts readSecret). */
  secretsOptional = false,
): ClientKeyConfig | undefined {
  const before = problems.errors.length;
  const r = new FieldReader(entry, file, at, problems);
  const name = r.string('name', true, 'e.g. name = "web-app": used in logs, metrics and usage');
  if (name !== undefined && !KEY_NAME_PATTERN.test(name)) {
    problems.error(
      file,
      `${at}.name`,
      `'${name}' is not a key name`,
      'letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit',
    );
  }
  const sha256 = readSecret(r, entry, file, at, env, problems, secretsOptional);
  r.accept('methods');
  const methodsHint = 'globs, e.g. methods = ["get*", "!getProgramAccounts"] ("!" denies)';
  const methods = stringList(entry.methods, file, `${at}.methods`, problems, methodsHint);
  for (const glob of methods ?? []) {
    if (!GLOB_PATTERN.test(glob))
      problems.error(file, `${at}.methods`, `'${glob}' is not a method glob`, methodsHint);
  }
  // An empty list reads like 'nothing', yet no allow list means every method: say so.
  if (methods?.length === 0 && entry.methods !== undefined)
    problems.error(
      file,
      `${at}.methods`,
      'is empty: a key with no methods could call nothing',
      'list the methods the key may call, or remove methods to allow every one',
    );
  const limit = (key: string, max: number, hint: string) =>
    r.integer(key, { min: 1, max, required: false, hint });
  const rpsLimit = limit('rps_limit', 1_000_000, 'requests per second for the key');
  const maxConcurrent = limit('max_concurrent', 1_000_000, 'requests in flight at once');
  const monthlyCredits = r.integer('monthly_credits', {
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    required: false,
    hint: "credits per billing period, counted in the serving node's prices",
  });
  const resetDay = r.integer('reset_day', {
    min: 1,
    max: 31,
    required: false,
    hint: "the day of the month the budget resets; a day past a short month's end means its last day",
  });
  r.accept('origins');
  const origins = readOriginList(entry.origins, file, problems, `${at}.origins`);
  const perIpRps = limit('per_ip_rps', 1_000_000, 'requests per second per client IP');
  const maxBatchSize = limit('max_batch_size', 100_000, 'elements per batch for the key');
  const maxSubscriptions = limit('max_subscriptions', 1_000_000, 'subscriptions per connection');
  r.accept('params');
  const params = readParamGuards(entry.params, file, `${at}.params`, problems);
  r.accept('chains');
  const chains = stringList(
    entry.chains,
    file,
    `${at}.chains`,
    problems,
    'e.g. chains = ["solana", "base"]: the [[chains]] the key may call; omit it for every chain',
  );
  const heavy = readHeavyReadFields(r, entry, file, at, problems);
  r.rejectUnknown(KEY_FIELDS);
  if (problems.errors.length > before || name === undefined || sha256 === undefined)
    return undefined;
  if (
    methods === undefined ||
    origins === undefined ||
    params === undefined ||
    chains === undefined ||
    heavy === undefined
  )
    return undefined;
  return {
    name,
    sha256,
    allow: methods.filter((glob) => !glob.startsWith('!')),
    deny: methods.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1)),
    rpsLimit,
    maxConcurrent,
    monthlyCredits,
    resetDay: resetDay ?? 1,
    origins,
    perIpRps,
    maxBatchSize,
    maxSubscriptions,
    params,
    chains,
    ...heavy,
  };
}
