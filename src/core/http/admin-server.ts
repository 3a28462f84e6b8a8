/**
 * The admin listener, only when `[server] admin_port` is set: on 127.0.0.1 unless
 * `admin_host` says otherwise (which needs a token). It serves what `cascade quota` needs from
 * a running server — live usage, and resets that the server's next flush cannot undo — and
 * the operator's routes (core/admin). With a token, every route but the static status page
 * asks for `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { accountUsageName } from '../config/accounts-section.js';
import { resetFailure } from '../errors.js';
import type { AccountQuotaRow, QuotaRow } from '../quota/quota-report.js';
import { listen } from './listen.js';
import { CallbackBodyReader, readBody } from './read-body.js';
import { sendJson, sendStatus } from './respond.js';

/** What the admin routes act on. */
export interface AdminHandlers {
  report(): QuotaRow[];
  /**
   * Zeroes usage of `names` (nodes, and accounts' pools as `account:NAME`) and persists it;
   * resolves with the nodes' new report.
   */
  reset(names: readonly string[]): Promise<QuotaRow[]>;
  nodeNames(): readonly string[];
  /** The provider accounts' pools (`[[accounts]]`); absent or empty: none configured. */
  accounts?(): AccountQuotaRow[];
  /** More routes (the operator's); true when handled. */
  routes?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
}

/** Where the admin listener binds and what it asks of callers. */
export interface AdminAccess {
  readonly host: string;
  /** Bearer token every admin request must carry; undefined = none (loopback only). */
  readonly token: string | undefined;
}

const LOOPBACK: AdminAccess = { host: '127.0.0.1', token: undefined };

/** Whether the request carries the token (compared in constant time). */
function authorized(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

const MAX_ADMIN_BODY = 64 * 1024;

/** What a reset asks for: nodes and provider accounts, by name. */
interface ResetTargets {
  readonly nodes: readonly string[];
  readonly accounts: readonly string[];
}

const RESET_SHAPE = '{"nodes": ["name", …]}, {"accounts": ["name", …]}, both, or {"all": true}';

/** The names in `value` (an array of strings), or undefined when it is not one. */
function namesIn(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((n) => typeof n === 'string')) return undefined;
  return value;
}

function unknownOf(kind: string, asked: readonly string[], known: readonly string[]) {
  const unknown = asked.filter((name) => !known.includes(name));
  return unknown.length === 0
    ? undefined
    : `unknown ${kind}(s): ${unknown.join(', ')}; known ${kind}s: ${known.join(', ') || 'none'}`;
}

function parseResetBody(
  body: Buffer,
  known: readonly string[],
  accounts: readonly string[],
): ResetTargets | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `body must be JSON: ${RESET_SHAPE}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return `body must be a JSON object: ${RESET_SHAPE}`;
  }
  const request = parsed as { nodes?: unknown; accounts?: unknown; all?: unknown };
  if (request.all === true) return { nodes: [...known], accounts: [...accounts] };
  const nodes = namesIn(request.nodes);
  const pools = namesIn(request.accounts);
  if (nodes === undefined || pools === undefined || nodes.length + pools.length === 0) {
    return `body must be ${RESET_SHAPE}`;
  }
  return (
    unknownOf('node', nodes, known) ??
    unknownOf('account', pools, accounts) ?? { nodes, accounts: pools }
  );
}

/** GET /admin/quota's and a reset's rows: the nodes', and the accounts' when configured. */
function quotaDocument(handlers: AdminHandlers, nodes: QuotaRow[]) {
  const accounts = handlers.accounts?.() ?? [];
  return { nodes, ...(accounts.length === 0 ? {} : { accounts }) };
}

/** Never lets a bad admin request take the proxy down with it. */
function handleSafely(
  req: IncomingMessage,
  res: ServerResponse,
  handlers: AdminHandlers,
  logger: Logger,
  token: string | undefined,
): void {
  try {
    const path = (req.url ?? '/').split('?')[0]!;
    if (token !== undefined && path !== '/status' && !authorized(req, token)) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendJson(res, 401, {
        error:
          'the admin listener needs "Authorization: Bearer <token>" (the token is in the variable server.admin_token_env names)',
      });
    }
    if (handlers.routes?.(req, res, path)) return;
    handle(req, res, handlers, logger);
  } catch (err) {
    logger.error({ err }, 'admin request failed');
    if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
  }
}

function handle(
  req: IncomingMessage,
  res: ServerResponse,
  handlers: AdminHandlers,
  logger: Logger,
): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/admin/quota') {
    if (req.method !== 'GET') return sendStatus(res, 405, 'Method Not Allowed', 'GET');
    return sendJson(res, 200, {
      source: 'server',
      pid: process.pid,
      ...quotaDocument(handlers, handlers.report()),
    });
  }
  if (path !== '/admin/quota/reset') return sendStatus(res, 404, 'Not Found');
  if (req.method !== 'POST') return sendStatus(res, 405, 'Method Not Allowed', 'POST');
  readBody(
    req,
    new CallbackBodyReader(MAX_ADMIN_BODY, (body) => {
      if (!body) return sendJson(res, 413, { error: 'body too large' });
      let targets: ResetTargets | string;
      try {
        const accounts = (handlers.accounts?.() ?? []).map((account) => account.name);
        targets = parseResetBody(body, handlers.nodeNames(), accounts);
      } catch (err) {
        logger.error({ err }, 'admin request failed');
        return sendJson(res, 500, { error: 'internal error' });
      }
      if (typeof targets === 'string') return sendJson(res, 400, { error: targets });
      const { nodes: names, accounts } = targets;
      handlers.reset([...names, ...accounts.map(accountUsageName)]).then(
        (nodes) => {
          logger.info(
            { nodes: names, ...(accounts.length === 0 ? {} : { accounts }) },
            'quota reset through the admin listener',
          );
          sendJson(res, 200, {
            source: 'server',
            reset: names,
            ...(accounts.length === 0 ? {} : { reset_accounts: accounts }),
            ...quotaDocument(handlers, nodes),
          });
        },
        (err: unknown) => {
          const { status, error } = resetFailure(err);
          sendJson(res, status, { error });
        },
      );
    }),
  );
}

/** A running admin listener. */
export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the admin listener on `access.host` (default 127.0.0.1):`port`. */
export async function startAdminServer(
  port: number,
  handlers: AdminHandlers,
  logger: Logger,
  access: AdminAccess = LOOPBACK,
): Promise<AdminServer> {
  const server: Server = createServer((req, res) =>
    handleSafely(req, res, handlers, logger, access.token),
  );
  const bound = await listen(server, access.host, port, 'admin');
  return {
    port: bound,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
