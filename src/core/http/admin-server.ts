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
import type { QuotaRow } from '../quota/quota-report.js';
import { listen } from './listen.js';
import { CallbackBodyReader, readBody } from './read-body.js';
import { sendJson, sendStatus } from './respond.js';

/** What the admin routes act on. */
export interface AdminHandlers {
  report(): QuotaRow[];
  /** Zeroes usage of `names` and persists it; resolves with the new report. */
  reset(names: readonly string[]): Promise<QuotaRow[]>;
  nodeNames(): readonly string[];
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

function parseResetBody(body: Buffer, known: readonly string[]): string[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'body must be JSON: {"nodes": ["name", …]} or {"all": true}';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return 'body must be a JSON object: {"nodes": ["name", …]} or {"all": true}';
  }
  const request = parsed as { nodes?: unknown; all?: unknown };
  if (request.all === true) return [...known];
  if (
    !Array.isArray(request.nodes) ||
    request.nodes.length === 0 ||
    !request.nodes.every((n) => typeof n === 'string')
  ) {
    return 'body must be {"nodes": ["name", …]} or {"all": true}';
  }
  const unknown = request.nodes.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    return `unknown node(s): ${unknown.join(', ')}; known nodes: ${known.join(', ')}`;
  return request.nodes;
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
    return sendJson(res, 200, { source: 'server', pid: process.pid, nodes: handlers.report() });
  }
  if (path !== '/admin/quota/reset') return sendStatus(res, 404, 'Not Found');
  if (req.method !== 'POST') return sendStatus(res, 405, 'Method Not Allowed', 'POST');
  readBody(
    req,
    new CallbackBodyReader(MAX_ADMIN_BODY, (body) => {
      if (!body) return sendJson(res, 413, { error: 'body too large' });
      let names: string[] | string;
      try {
        names = parseResetBody(body, handlers.nodeNames());
      } catch (err) {
        logger.error({ err }, 'admin request failed');
        return sendJson(res, 500, { error: 'internal error' });
      }
      if (typeof names === 'string') return sendJson(res, 400, { error: names });
      handlers.reset(names).then(
        (nodes) => {
          logger.info({ nodes: names }, 'quota reset through the admin listener');
          sendJson(res, 200, { source: 'server', reset: names, nodes });
        },
        (err: unknown) =>
          sendJson(res, 500, { error: `reset applied but not saved: ${(err as Error).message}` }),
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
