/**
 * A path no chain serves, with `[[chains]]`: a JSON-RPC error listing the chains' paths, so a
 * client pointed at the wrong URL learns where to go. Like every error cascade writes itself it
 * echoes the request's id as written: a POST's body is read (up to `[server] max_body_bytes`)
 * for it — a batch gets one error per element, under each element's id.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestOutcome } from '../metrics.js';
import { RPC_ERROR } from '../protocol/error-body.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { parseRequest, readIdJson } from '../protocol/rpc-request.js';
import { failure } from '../routing/route-answer.js';
import { batchRefusalJson, refusalJson } from '../serving/refusal.js';
import { CallbackBodyReader, readBody } from './read-body.js';
import { sendBytes } from './respond.js';

/** Answers `req` for `path`, which none of `served` (`name: paths`) claims. */
export function answerNoChain(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  served: readonly string[],
  maxBodyBytes: number,
  registry: MethodRegistry,
): void {
  const refused = failure(
    404,
    RPC_ERROR.invalidRequest,
    `no chain is served at ${path}; chains are served at ${served.join('; ')}`,
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
