/**
 * A client key's secret in the config (issue 27): given only as `key_sha256` (the hex SHA-256
 * of the key, as `cascade key new` prints it) or `key_env` (a variable holding the key, hashed
 * here), so no config file ever holds a usable key; a `key = "…"` line is refused.
 */
import { createHash } from 'node:crypto';
import type { ProblemList } from './problem-list.js';
import type { FieldReader, Table } from './toml-fields.js';

/** Shortest key a `key_env` variable may hold: anything shorter can be guessed. */
export const MIN_KEY_LENGTH = 16;
const SHA256_PATTERN = /^[0-9a-f]{64}$/;
/** A key in a URL path segment (`/<key>`) is 16–256 of `[A-Za-z0-9_~.-]`: what the segment carries as is. */
export const PATH_KEY_MIN_CHARS = 16;
export const PATH_KEY_MAX_CHARS = 256;

/** `[A-Za-z0-9_~.-]`: the characters of a key in a URL path (`cascade key new` writes only these). */
export function isPathKeyChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x5f || // _
    code === 0x7e || // ~
    code === 0x2e || // .
    code === 0x2d // -
  );
}

/** Whether `key` can be passed as a URL path segment (keys/presented-key.ts reads the same rule). */
function isPathKey(key: string): boolean {
  if (key.length < PATH_KEY_MIN_CHARS || key.length > PATH_KEY_MAX_CHARS) return false;
  for (let i = 0; i < key.length; i++) if (!isPathKeyChar(key.charCodeAt(i))) return false;
  return true;
}
/** What an HTTP header value carries byte for byte. */
const HEADER_SAFE_KEY = /^[\x21-\x7e]+$/;

/** The SHA-256 of a key's text, lower-case hex: what `key_sha256` holds. */
export function keyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * What an entry's hash is when its `key_env` variable is not set and secrets are optional (an
 * operator command: it names keys, never matches one).
 */
export const UNRESOLVED_SECRET = '';

/**
 * The hash of a `[[keys]]` entry's secret, or undefined (with the problem listed). With
 * `secretsOptional`, a `key_env` variable that is not set is no problem: UNRESOLVED_SECRET.
 */
export function readSecret(
  r: FieldReader,
  entry: Table,
  file: string,
  at: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
  secretsOptional = false,
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
    if ((key === undefined || key === '') && secretsOptional) return UNRESOLVED_SECRET;
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
    warnUnpassable(key, variable, file, at, problems);
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

/**
 * A key that works only in some of the places a client may put it: a URL path carries 16–256
 * of `[A-Za-z0-9_~.-]` (the form `cascade key new` writes), headers carry printable ASCII;
 * anything else works only percent-encoded in `?api-key=`. Said once, at load.
 */
function warnUnpassable(
  key: string,
  variable: string,
  file: string,
  at: string,
  problems: ProblemList,
): void {
  if (isPathKey(key)) return;
  const fix = 'generate keys with `cascade key new NAME`, which writes keys that fit everywhere';
  if (!HEADER_SAFE_KEY.test(key)) {
    problems.warn(
      file,
      `${at}.key_env`,
      `the key in ${variable} has characters neither a URL path nor an HTTP header carries as is; clients can pass it only percent-encoded in ?api-key=`,
      fix,
    );
    return;
  }
  problems.warn(
    file,
    `${at}.key_env`,
    `the key in ${variable} cannot be passed in the URL path (a path key is 16-256 of A-Z a-z 0-9 _ ~ . -); clients must use ?api-key= (percent-encoded), x-api-key or Authorization: Bearer`,
    fix,
  );
}
