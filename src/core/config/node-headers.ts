/**
 * A node's `headers = { "x-api-key" = "${KEY}" }`: extra request headers for providers that
 * take their key in a header. Values expand `$VAR` like URLs and are secrets, so no message
 * here ever quotes one; names are checked, because a bad name fails every request at send
 * time, and the headers cascade itself sets cannot be overridden.
 */
import { substituteEnv } from './env-substitution.js';
import type { ProblemList } from './problem-list.js';
import { describeType, isTable } from './toml-fields.js';

/** RFC 9110 token characters: what a header name may be made of. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space, tab and obs-text: what a header value may hold (no CR, LF or NUL). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Set by cascade or by the HTTP layer for every request; a configured value would break it. */
const RESERVED = new Set([
  'content-type',
  'content-length',
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-connection',
]);
const HINT = 'e.g. headers = { "x-api-key" = "${PROVIDER_KEY}" }';

/** Where the node's headers are and what else is known about it. */
export interface HeaderContext {
  readonly file: string;
  /** `nodes[2].headers` */
  readonly path: string;
  /** The node's name, for messages. */
  readonly label: string;
  /** The URL carries user:password (sent as an `authorization` header). */
  readonly urlHasCredentials: boolean;
  readonly problems: ProblemList;
}

function checkName(name: string, seen: Set<string>, at: HeaderContext): boolean {
  const { file, path, label, problems } = at;
  const lower = name.toLowerCase();
  if (!TOKEN.test(name)) {
    problems.error(file, `${path}.${name}`, `'${name}' is not a valid header name`, HINT);
  } else if (RESERVED.has(lower)) {
    problems.error(
      file,
      `${path}.${name}`,
      `node '${label}' cannot set '${lower}': cascade sets it on every request`,
      'remove it',
    );
  } else if (seen.has(lower)) {
    problems.error(
      file,
      `${path}.${name}`,
      `node '${label}' sets '${lower}' twice (header names are case-insensitive)`,
      'keep one',
    );
  } else if (lower === 'authorization' && at.urlHasCredentials) {
    problems.error(
      file,
      `${path}.${name}`,
      `node '${label}' has user:password in its URL and an authorization header`,
      'keep one: the URL credentials are sent as HTTP Basic auth',
    );
  } else {
    seen.add(lower);
    return true;
  }
  return false;
}

function checkValue(name: string, raw: string, env: NodeJS.ProcessEnv, at: HeaderContext) {
  const { file, path, label, problems } = at;
  const where = `${path}.${name}`;
  const sub = substituteEnv(raw, env);
  for (const variable of sub.missing) {
    problems.error(
      file,
      where,
      `env var ${variable} is required but not set (node '${label}', header '${name}')`,
      `export ${variable}=… or add it to .env in the working directory`,
    );
  }
  for (const reference of sub.malformed) {
    problems.error(
      file,
      where,
      `malformed variable reference '${reference}'`,
      'write $NAME or ${NAME}',
    );
  }
  if (sub.missing.length > 0 || sub.malformed.length > 0) return undefined;
  if (sub.value.trim() === '') {
    problems.error(
      file,
      where,
      `header '${name}' of node '${label}' is empty`,
      'give it a value, or remove it',
    );
    return undefined;
  }
  if (!FIELD_VALUE.test(sub.value)) {
    problems.error(
      file,
      where,
      `the value of header '${name}' (node '${label}') holds a line break or another character a header cannot carry`,
      'check the value (or the variable it comes from)',
    );
    return undefined;
  }
  return sub.value;
}

/**
 * Reads a node's `headers` table; returns them with lower-case names (empty when absent), or
 * undefined after reporting a problem.
 */
export function readNodeHeaders(
  value: unknown,
  env: NodeJS.ProcessEnv,
  at: HeaderContext,
): Readonly<Record<string, string>> | undefined {
  if (value === undefined) return {};
  if (!isTable(value)) {
    at.problems.error(at.file, at.path, `must be a table, got ${describeType(value)}`, HINT);
    return undefined;
  }
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  let ok = true;
  for (const [name, raw] of Object.entries(value)) {
    if (typeof raw !== 'string') {
      const got = isTable(raw) || Array.isArray(raw) ? describeType(raw) : 'a non-string value';
      at.problems.error(at.file, `${at.path}.${name}`, `must be a string, got ${got}`, HINT);
      ok = false;
      continue;
    }
    const expanded = checkName(name, seen, at) ? checkValue(name, raw, env, at) : undefined;
    if (expanded === undefined) ok = false;
    else headers[name.toLowerCase()] = expanded;
  }
  return ok ? Object.freeze(headers) : undefined;
}
