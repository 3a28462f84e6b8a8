/**
 * The `[server]` keys of the operator's view: where the admin listener binds, the environment
 * variable holding its bearer token, and the opt-in routing headers. A non-loopback admin
 * listener without a token is refused (the rule lives with the other [server] rules).
 */
import type { ProblemList } from './problem-list.js';
import type { FieldReader } from './toml-fields.js';

/** The variable holding the admin token unless `admin_token_env` names another. */
export const DEFAULT_ADMIN_TOKEN_ENV = 'CASCADE_ADMIN_TOKEN';

/** The keys this module reads (for the unknown-key check). */
export const ADMIN_KEYS = ['admin_host', 'admin_token_env', 'routing_headers'] as const;

/** What the keys resolve to. */
export interface AdminFields {
  readonly adminHost: string;
  readonly adminTokenEnv: string;
  /** The token's value (a secret: never log it); undefined when the variable is unset/empty. */
  readonly adminToken: string | undefined;
  readonly routingHeaders: boolean;
}

/** Reads the admin keys of `[server]`; the token comes from `env`. */
export function readAdminFields(
  r: FieldReader,
  env: NodeJS.ProcessEnv,
  file: string,
  problems: ProblemList,
): AdminFields {
  const adminHost = r.string(
    'admin_host',
    false,
    'e.g. admin_host = "127.0.0.1" (the default); elsewhere needs a token, see admin_token_env',
  );
  if (adminHost !== undefined && adminHost.trim() === '') {
    problems.error(file, 'server.admin_host', 'must not be empty', 'omit it for 127.0.0.1');
  }
  const tokenEnv = r.string(
    'admin_token_env',
    false,
    `the name of an environment variable, e.g. "${DEFAULT_ADMIN_TOKEN_ENV}" (the default)`,
  );
  if (tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) {
    problems.error(
      file,
      'server.admin_token_env',
      // The value is not echoed: someone may have pasted the token itself here.
      'is not an environment variable name (letters, digits and _)',
      `name the variable, e.g. admin_token_env = "${DEFAULT_ADMIN_TOKEN_ENV}" — never the token itself`,
    );
  }
  const adminTokenEnv = tokenEnv ?? DEFAULT_ADMIN_TOKEN_ENV;
  const token = env[adminTokenEnv];
  return {
    adminHost: adminHost ?? '127.0.0.1',
    adminTokenEnv,
    adminToken: token === undefined || token === '' ? undefined : token,
    routingHeaders: r.boolean('routing_headers', false),
  };
}
