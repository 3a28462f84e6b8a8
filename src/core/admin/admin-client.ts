/**
 * The client side of the operator's routes, for `cascade status` and `cascade node`: where the
 * running server's admin listener is (a URL given, else the config and the quotas lock), and
 * calls with its bearer token. Every failure is one CascadeError line saying what to do.
 */
import { WORKER_ASK_TIMEOUT_MS } from '../cluster/worker-asks.js';
import { CascadeError } from '../errors.js';
import { hostPort } from '../http/listen.js';
import type { FleetWrite, KeyRow } from './key-routes.js';
import type { NodesDocument } from './operator.js';

/**
 * How long a command waits for the server's answer: past the deadline the primary of
 * `--workers N` gives a worker that does not answer, so a slow worker gives a (partial) answer
 * rather than "no cascade server answers".
 */
const ADMIN_TIMEOUT_MS = WORKER_ASK_TIMEOUT_MS + 3000;

/** A running server's admin listener, and the token it asks for. */
export interface AdminTarget {
  /** e.g. http://127.0.0.1:3099 (no trailing slash). */
  readonly url: string;
  readonly token: string | undefined;
}

/** The error when nothing answers at `target`. */
function unreachable(target: AdminTarget, cause: unknown): CascadeError {
  const why =
    cause instanceof Error
      ? ((cause.cause as Error | undefined)?.message ?? cause.message)
      : String(cause);
  return new CascadeError(
    'UNREACHABLE',
    `no cascade server answers at ${target.url} (${why})`,
    'start `cascade serve` with [server] admin_port set (or `--admin-port`), or pass --admin URL',
    { cause },
  );
}

async function call<T>(target: AdminTarget, route: string, method: 'GET' | 'POST'): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${target.url}${route}`, {
      method,
      headers: target.token === undefined ? undefined : { authorization: `Bearer ${target.token}` },
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
  } catch (err) {
    throw unreachable(target, err);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CascadeError(
      'ADMIN',
      `${target.url}${route} answered HTTP ${response.status} without JSON`,
      'is that port a cascade admin listener?',
    );
  }
  if (response.status === 401)
    throw new CascadeError(
      'ADMIN',
      `${target.url} refused: a bearer token is required or wrong`,
      "set the variable [server] admin_token_env names (CASCADE_ADMIN_TOKEN by default) to the server's token",
    );
  if (!response.ok) {
    const error =
      (body as { error?: string; problems?: string[] }).error ??
      (body as { problems?: string[] }).problems?.join('; ');
    throw new CascadeError(
      'ADMIN',
      `the running server refused: ${error ?? `HTTP ${response.status}`}`,
    );
  }
  return body as T;
}

/** GET /admin/nodes. */
export function fetchNodes(target: AdminTarget): Promise<NodesDocument> {
  return call(target, '/admin/nodes', 'GET');
}

/** POST /admin/nodes/{name}/cordon or /uncordon. */
export function setCordon(
  target: AdminTarget,
  name: string,
  on: boolean,
): Promise<{ node: string; cordoned: boolean }> {
  return call(
    target,
    `/admin/nodes/${encodeURIComponent(name)}/${on ? 'cordon' : 'uncordon'}`,
    'POST',
  );
}

/** GET /admin/keys: every key with its usage, budget and next reset. */
export function fetchKeys(target: AdminTarget): Promise<{ keys: KeyRow[] }> {
  return call(target, '/admin/keys', 'GET');
}

/**
 * POST /admin/keys/{name}/revoke, /unrevoke, /reset, /budget/{credits} or /budget/config;
 * `fleet` says, with replicas on Redis, whether Redis has the change; `not_saved`, why the
 * server could not write it to disk (it is in force, until a restart).
 */
export function keyAction(
  target: AdminTarget,
  name: string,
  action: 'revoke' | 'unrevoke' | 'reset' | { budget: number | 'config' },
): Promise<{ key: KeyRow; fleet?: FleetWrite; not_saved?: string }> {
  const verb = typeof action === 'string' ? action : `budget/${action.budget}`;
  return call(target, `/admin/keys/${encodeURIComponent(name)}/${verb}`, 'POST');
}

/** The URL of an admin listener on `host`:`port` (a wildcard address is reached on loopback). */
export function adminUrl(host: string, port: number): string {
  const reach = host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host;
  return `http://${hostPort(reach, port)}`;
}
