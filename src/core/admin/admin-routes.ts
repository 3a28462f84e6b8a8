/**
 * The operator's routes on the admin listener: the node table (GET /admin/nodes), cordons
 * (POST /admin/nodes/{name}/cordon and /uncordon), reload (POST /admin/reload, as SIGHUP) and
 * the live status page (GET /status).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { sendBytes, sendJson, sendStatus } from '../http/respond.js';
import type { NodesDocument, Operator } from './operator.js';
import { renderStatusPage } from './status-page.js';

const STATUS_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";
const NODE_ROUTE = /^\/admin\/nodes\/([^/]+)\/(cordon|uncordon)$/;

function cordonRoute(
  res: ServerResponse,
  operator: Operator,
  rawName: string,
  on: boolean,
  logger: Logger,
): void {
  let name: string;
  try {
    name = decodeURIComponent(rawName);
  } catch {
    return sendJson(res, 400, { error: `node name ${JSON.stringify(rawName)} is not URL-encoded` });
  }
  operator.cordon(name, on).then(
    async (found) => {
      if (found) return sendJson(res, 200, { node: name, cordoned: on });
      const known = (await operator.nodes()).nodes.map((node) => node.name);
      sendJson(res, 404, {
        error: `unknown node ${JSON.stringify(name)}; known nodes: ${known.join(', ')}`,
      });
    },
    (err: unknown) => {
      logger.error({ err }, 'cordon failed');
      sendJson(res, 500, { error: `cordon failed: ${(err as Error).message}` });
    },
  );
}

function statusRoute(
  res: ServerResponse,
  operator: Operator,
  protectedData: boolean,
  logger: Logger,
): void {
  // The page may talk to its own origin only, and runs only its own inline code.
  res.setHeader('content-security-policy', STATUS_CSP);
  res.setHeader('cache-control', 'no-store');
  const send = (doc: NodesDocument | undefined) =>
    sendBytes(res, 200, 'text/html; charset=utf-8', renderStatusPage(doc));
  // Behind a token the page itself is public: it carries no data, its script asks with the token.
  if (protectedData) return send(undefined);
  operator.nodes().then(send, (err: unknown) => {
    logger.warn({ err }, 'status page rendered without data');
    send(undefined);
  });
}

function reloadRoute(res: ServerResponse, operator: Operator): void {
  const outcome = operator.reload();
  if (outcome.ok) {
    return sendJson(res, 200, { ok: true, ...outcome.diff, needs_restart: outcome.needsRestart });
  }
  sendJson(res, 422, { ok: false, problems: outcome.problems });
}

/**
 * The read-only part (the page and the table) for the loopback metrics listener, when the
 * admin data is not behind a token; false for anything else.
 */
export function handleStatusRoute(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  operator: Operator,
  logger: Logger,
): boolean {
  if (path !== '/status' && path !== '/admin/nodes') return false;
  return handleOperatorRoute(req, res, path, operator, logger);
}

/** Handles the operator's routes; false when `path` is none of them. */
export function handleOperatorRoute(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  operator: Operator,
  logger: Logger,
  protectedData = false,
): boolean {
  if (path === '/status' || path === '/admin/nodes') {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendStatus(res, 405, 'Method Not Allowed', 'GET');
      return true;
    }
    if (path === '/status') {
      statusRoute(res, operator, protectedData, logger);
      return true;
    }
    operator.nodes().then(
      (doc) => sendJson(res, 200, doc),
      (err: unknown) =>
        sendJson(res, 503, { error: `node view unavailable: ${(err as Error).message}` }),
    );
    return true;
  }
  const cordon = NODE_ROUTE.exec(path);
  if (cordon === null && path !== '/admin/reload') return false;
  if (req.method !== 'POST') {
    sendStatus(res, 405, 'Method Not Allowed', 'POST');
    return true;
  }
  // Bodies are not needed; whatever was sent is read and dropped so the connection stays usable.
  req.resume();
  if (cordon === null) reloadRoute(res, operator);
  else cordonRoute(res, operator, cordon[1]!, cordon[2] === 'cordon', logger);
  return true;
}
