/**
 * A path no chain serves, with `[[chains]]`: a JSON-RPC error listing the chains' paths, so a
 * client pointed at the wrong URL learns where to go. Like every error cascade writes itself it
 * echoes the request's id as written: a POST's body is read (up to `[server] max_body_bytes`)
 * for it — a batch gets one error per element, under each element's id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PATH_KEY_MIN_CHARS } from '../config/key-secret.js';
import { RequestOutcome } from '../metrics.js';
import { RPC_ERROR } from '../protocol/error-body.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { parseRequest, readIdJson } from '../protocol/rpc-request.js';
import { failure } from '../routing/route-answer.js';
import { batchRefusalJson, refusalJson } from '../serving/refusal.js';
import { CallbackBodyReader, readBody } from './read-body.js';
import { sendBytes } from './respond.js';

/** Longest path echoed back; the rest is cut (a path may be any length a client sends). */
const MAX_ECHOED_PATH = 200;

/**
 * `path` as the error may show it: a segment as long as a client key (a secret, wherever the
 * client put it in the path) is `***` unless a chain's own path has it, and a long path is cut.
 */
export function echoedPath(path: string, chainSegments: ReadonlySet<string>): string {
  const shown = path
    .split('/')
    .map((segment) =>
      segment.length >= PATH_KEY_MIN_CHARS && !chainSegments.has(segment) ? '***' : segment,
    )
    .join('/');
  return shown.length > MAX_ECHOED_PATH ? `${shown.slice(0, MAX_ECHOED_PATH)}…` : shown;
}

/**
 * Answers `req` for `path`, which none of `served` (`name: paths`) claims; `chainPaths` are
 * the chains' paths (their segments are shown as they are).
 */
export function answerNoChain(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  served: readonly string[],
  chainPaths: readonly string[],
  maxBodyBytes: number,
  registry: MethodRegistry,
): void {
  const segments = new Set(chainPaths.flatMap((chainPath) => chainPath.split('/')));
  const refused = failure(
    404,
    RPC_ERROR.invalidRequest,
    `no chain is served at ${echoedPath(path, segments)}; chains are served at ${served.join('; ')}`,
    RequestOutcome.badRequest,
  );
  const send = (text: string) => sendBytes(res, 404, 'application/json', text);
  if (req.method !== 'POST') return send(refusalJson(refused, 'null'));
  readBody(
    req,
    new CallbackBodyReader(maxBodyBytes, (body) => {
      // Too big to read: the id cannot be known, and the rest of the body is not wanted.
      if (body === undefined) {
        res.setHeader('connection', 'close');
        return send(refusalJson(refused, 'null'));
      }
      const parsed = parseRequest(body, registry);
      if (!parsed.ok) return send(refusalJson(refused, parsed.idJson));
      const batch = parsed.request.batch;
      if (batch === undefined) return send(refusalJson(refused, readIdJson(parsed.request)));
      send(
        batchRefusalJson(
          refused,
          batch.map((element) => element.idJson),
        ),
      );
    }),
  );
}
