/**
 * Open by default, loud when exposed (issue 27): a listener other machines can reach, with no
 * key required, lets anyone who finds the URL spend every credit the team pays for. That is a
 * warning (`serve` and `validate-config` print it), not an error: a private network or a
 * gateway in front may be exactly what the operator wants.
 */
import type { KeysConfig } from './key-types.js';
import type { ProblemList } from './problem-list.js';
import { isLoopback } from './server-section.js';
import type { ServerConfig } from './types.js';

/** The warning for a listener on `host` that takes keyless calls, or undefined when none. */
export function exposureWarning(
  host: string,
  requireKey: boolean,
): { message: string; hint: string } | undefined {
  if (requireKey || isLoopback(host)) return undefined;
  return {
    message: `the listener on ${host} is reachable from other machines and takes calls without a client key: anyone who finds the URL can spend every node's credits`,
    hint: 'add [[keys]] and set server.require_key = true (README, "Client keys"), or bind 127.0.0.1',
  };
}

/** Checks `require_key` against the keys there are, and warns when the listener is exposed. */
export function checkKeyExposure(
  server: ServerConfig,
  keys: KeysConfig | undefined,
  file: string,
  problems: ProblemList,
): void {
  const requireKey = server.requireKey === true;
  if (requireKey && (keys === undefined || keys.keys.length === 0) && keys?.file === undefined) {
    problems.error(
      file,
      'server.require_key',
      'require_key = true but no [[keys]] are configured, so every call would be refused',
      'add a key (cascade key new NAME prints the [[keys]] lines), or set require_key = false',
    );
  }
  const warning = exposureWarning(server.host, requireKey);
  if (warning !== undefined) problems.warn(file, 'server.host', warning.message, warning.hint);
}
