/**
 * Reads `[[keys]]` and `keys_file` (issue 27). A key's secret is given only as `key_sha256`
 * (the hex SHA-256 of the key, as `cascade key new` prints it) or `key_env` (a variable holding
 * the key, hashed here): no config file ever holds a usable key. The keys file holds `[[keys]]`
 * tables alone and is read again on every load, so SIGHUP picks up added and revoked keys.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { readHeavyReadFields } from './heavy-read-fields.js';
import type { ClientKeyConfig, KeysConfig } from './key-types.js';
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
  'required_filters',
  'max_answer_bytes',
] as const;

/** Shortest key a `key_env` variable may hold: anything shorter can be guessed. */
export const MIN_KEY_LENGTH = 16;
/** What a key's name may be: it appears in metric labels, logs and URLs of the admin API. */
export const KEY_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SHA256_PATTERN = /^[0-9a-f]{64}$/;
const GLOB_PATTERN = /^!?[A-Za-z0-9_*.:-]+$/;

/** The SHA-256 of a key's text, lower-case hex: what `key_sha256` holds. */
export function keyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function stringList(
  value: unknown,
  file: string,
  at: string,
  problems: ProblemList,
  hint: string,
): string[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    problems.error(file, at, `must be a list of strings, got ${describeType(value)}`, hint);
    return undefined;
  }
  return value as string[];
}

function readSecret(
  r: FieldReader,
  entry: Table,
  file: string,
  at: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
): string | undefined {
  const hashed = r.string('key_sha256', false);
  const variable = r.string('key_env', false);
  const hint =
    'run `cascade key new NAME` and paste the key_sha256 line it prints, or set key_env = "VAR" to read the key from the environment';
  if (hashed !== undefined && variable !== undefined) {
    problems.error(file, `${at}.key_sha256`, 'give key_sha256 or key_env, not both', hint);
    return undefined;
  }
  if (hashed !== undefined) {
    if (!SHA256_PATTERN.test(hashed)) {
      problems.error(file, `${at}.key_sha256`, 'must be 64 lower-case hex digits', hint);
      return undefined;
    }
    return hashed;
  }
  if (variable !== undefined) {
    const key = env[variable];
    if (key === undefined || key === '') {
      problems.error(
        file,
        `${at}.key_env`,
        `the environment variable ${variable} is not set`,
        hint,
      );
      return undefined;
    }
    if (key.length < MIN_KEY_LENGTH || /\s/.test(key)) {
      problems.error(
        file,
        `${at}.key_env`,
        `${variable} must hold at least ${MIN_KEY_LENGTH} characters without spaces`,
        hint,
      );
      return undefined;
    }
    return keyHash(key);
  }
  if ('key' in entry) {
    r.accept('key');
    problems.error(file, `${at}.key`, 'a key is never written in a config file', hint);
  } else {
    problems.error(file, `${at}.key_sha256`, 'is required (or key_env)', hint);
  }
  return undefined;
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

function readKey(
  entry: Table,
  at: string,
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
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
  const sha256 = readSecret(r, entry, file, at, env, problems);
  r.accept('methods');
  const methodsHint = 'globs, e.g. methods = ["get*", "!getProgramAccounts"] ("!" denies)';
  const methods = stringList(entry.methods, file, `${at}.methods`, problems, methodsHint);
  for (const glob of methods ?? []) {
    if (!GLOB_PATTERN.test(glob))
      problems.error(file, `${at}.methods`, `'${glob}' is not a method glob`, methodsHint);
  }
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
  const heavy = readHeavyReadFields(r, entry, file, at, problems);
  r.rejectUnknown(KEY_FIELDS);
  if (problems.errors.length > before || name === undefined || sha256 === undefined)
    return undefined;
  if (methods === undefined || origins === undefined || params === undefined) return undefined;
  if (heavy === undefined) return undefined;
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
    ...heavy,
  };
}

function readKeyList(
  value: unknown,
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
): ClientKeyConfig[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.error(
      file,
      'keys',
      `must be an array of tables, got ${describeType(value)}`,
      'write each key as [[keys]]',
    );
    return [];
  }
  const keys: ClientKeyConfig[] = [];
  value.forEach((entry: unknown, index) => {
    if (!isTable(entry)) {
      problems.error(
        file,
        `keys[${index}]`,
        `must be a table, got ${describeType(entry)}`,
        'write each key as [[keys]]',
      );
      return;
    }
    const key = readKey(entry, `keys[${index}]`, file, env, problems);
    if (key !== undefined) keys.push(key);
  });
  return keys;
}

function readKeysFile(
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
): ClientKeyConfig[] {
  let doc: Table;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'keys file not found'
        : `cannot read the keys file: ${(err as Error).message.split('\n')[0]}`;
    problems.error(file, '', message, 'keys_file names a TOML file of [[keys]] tables');
    return [];
  }
  for (const key of Object.keys(doc)) {
    if (key !== 'keys')
      problems.error(file, key, 'unknown key', 'a keys file holds [[keys]] tables only');
  }
  return readKeyList(doc.keys, file, env, problems);
}

/**
 * The config's keys: `[[keys]]` and those of `keys_file` (relative to the config's folder).
 * Undefined when neither is present (cascade is open, as before keys existed).
 */
export function readKeysSection(
  doc: Table,
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
): KeysConfig | undefined {
  if (doc.keys === undefined && doc.keys_file === undefined) return undefined;
  const keys = readKeyList(doc.keys, file, env, problems);
  let keysFile: string | undefined;
  if (doc.keys_file !== undefined) {
    if (typeof doc.keys_file !== 'string' || doc.keys_file.trim() === '') {
      problems.error(
        file,
        'keys_file',
        `must be a file path, got ${describeType(doc.keys_file)}`,
        'e.g. keys_file = "keys.toml"',
      );
    } else {
      keysFile = path.resolve(path.dirname(file), doc.keys_file);
      keys.push(...readKeysFile(keysFile, env, problems));
    }
  }
  const names = new Set<string>();
  const hashes = new Map<string, string>();
  for (const key of keys) {
    if (names.has(key.name))
      problems.error(
        file,
        'keys',
        `two keys share the name '${key.name}'`,
        'key names must be unique; usage and metrics are keyed by them',
      );
    names.add(key.name);
    const other = hashes.get(key.sha256);
    if (other !== undefined)
      problems.error(
        file,
        'keys',
        `keys '${other}' and '${key.name}' have the same secret`,
        'give each client its own key (cascade key new NAME)',
      );
    hashes.set(key.sha256, key.name);
  }
  return { keys, file: keysFile };
}
