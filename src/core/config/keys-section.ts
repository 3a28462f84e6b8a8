/**
 * Reads `[[keys]]` and `keys_file` (issue 27): the list of entries (each read by key-entry.ts,
 * its secret by key-secret.ts), the keys file, and the rules across entries (unique names and
 * secrets). The keys file holds `[[keys]]` tables alone and is read again on every load, so
 * SIGHUP picks up added and revoked keys.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { readKey } from './key-entry.js';
import { UNRESOLVED_SECRET } from './key-secret.js';
import type { ClientKeyConfig, KeysConfig } from './key-types.js';
import type { ProblemList } from './problem-list.js';
import { describeType, isTable, type Table } from './toml-fields.js';

export { KEY_NAME_PATTERN } from './key-entry.js';
export { MIN_KEY_LENGTH, keyHash } from './key-secret.js';

/** A key as read, and where it was written (problems across entries name that place). */
interface ReadKey {
  readonly key: ClientKeyConfig;
  readonly file: string;
  readonly at: string;
}

/** How the entries' secrets are read: from `env`; optional for operator commands. */
interface SecretSource {
  readonly env: NodeJS.ProcessEnv;
  readonly optional: boolean;
}

function readKeyList(
  value: unknown,
  file: string,
  secrets: SecretSource,
  problems: ProblemList,
): ReadKey[] {
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
  const keys: ReadKey[] = [];
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
    const at = `keys[${index}]`;
    const key = readKey(entry, at, file, secrets.env, problems, secrets.optional);
    if (key !== undefined) keys.push({ key, file, at });
  });
  return keys;
}

function readKeysFile(file: string, secrets: SecretSource, problems: ProblemList): ReadKey[] {
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
  return readKeyList(doc.keys, file, secrets, problems);
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
  /** Operator commands: a `key_env` variable not set in their shell is fine. */
  secretsOptional = false,
): KeysConfig | undefined {
  if (doc.keys === undefined && doc.keys_file === undefined) return undefined;
  const secrets: SecretSource = { env, optional: secretsOptional };
  const keys = readKeyList(doc.keys, file, secrets, problems);
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
      keys.push(...readKeysFile(keysFile, secrets, problems));
    }
  }
  const names = new Set<string>();
  const hashes = new Map<string, string>();
  for (const { key, file: where, at } of keys) {
    if (names.has(key.name))
      problems.error(
        where,
        `${at}.name`,
        `two keys share the name '${key.name}'`,
        'key names must be unique; usage and metrics are keyed by them',
      );
    names.add(key.name);
    if (key.sha256 === UNRESOLVED_SECRET) continue;
    const other = hashes.get(key.sha256);
    if (other !== undefined)
      problems.error(
        where,
        at,
        `keys '${other}' and '${key.name}' have the same secret`,
        'give each client its own key (cascade key new NAME)',
      );
    hashes.set(key.sha256, key.name);
  }
  return { keys: keys.map((read) => read.key), file: keysFile };
}
