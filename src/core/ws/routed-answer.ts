/**
 * Requests that enter the HTTP router from the WebSocket side — a client's plain request, or
 * cascade's own gap-fill call — and their answers as bytes: routing is the same as for HTTP
 * (tiers, limits, prices, retries, classification); only the way back differs.
 */
import { Writable } from 'node:stream';
import type { ForwardHeaders } from '../node/attempt-response.js';
import { UpstreamStream } from '../node/upstream-stream.js';
import {
  ERROR_MESSAGE,
  RPC_ERROR,
  WRITE_UNCONFIRMED_MESSAGE,
  errorJson,
} from '../protocol/error-body.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { parseRequest, type RpcRequest } from '../protocol/rpc-request.js';
import type { RouteContext, RouteResult } from '../routing/route-context.js';
import { route } from '../routing/route.js';

/** Largest routed answer collected for one WebSocket message. */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** A routed request's answer, as one message. */
export interface RoutedAnswer {
  /** The bytes to send (an upstream's answer, or cascade's error with the request's id). */
  readonly body: Buffer;
  /** Whether a node answered (false: 502/504-style failure). */
  readonly forwarded: boolean;
  readonly timedOut: boolean;
  readonly node: string | undefined;
  readonly credits: number;
}

/** Reads a streamed (large) answer into memory, up to `max` bytes. */
export function collectStream(stream: UpstreamStream, max = MAX_ANSWER_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > max) return done(new Error(`answer over ${max} bytes`));
        chunks.push(chunk);
        done();
      },
    });
    stream.onFinish((end) =>
      end === 'relayed' ? resolve(Buffer.concat(chunks, size)) : reject(new Error(`answer ${end}`)),
    );
    sink.on('error', () => stream.abort(new Error('answer too large')));
    stream.pipeTo(sink);
  });
}

/** A body that reads as JSON-RPC (an object or array), so it can go on the socket as is. */
function isJsonRpcText(body: Buffer): boolean {
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    return byte === 0x7b || byte === 0x5b;
  }
  return false;
}

/** Turns how routing ended into the message for the socket. */
export async function answerOf(result: RouteResult, idJson: string): Promise<RoutedAnswer> {
  const failure = (message: string, timedOut: boolean): RoutedAnswer => ({
    body: Buffer.from(errorJson(RPC_ERROR.serverError, message, idJson)),
    forwarded: false,
    timedOut,
    node: undefined,
    credits: result.credits,
  });
  if (result.kind === 'timeout') return failure(ERROR_MESSAGE.globalTimeout, true);
  // A write that may have landed and was not resent: say so, as the HTTP side does.
  if (result.kind === 'exhausted' && result.unsure === true)
    return failure(WRITE_UNCONFIRMED_MESSAGE, false);
  if (result.kind !== 'answer') return failure(ERROR_MESSAGE.allFailed, false);
  let body: Buffer;
  if (result.body instanceof UpstreamStream) {
    if (result.body.failed) return failure(ERROR_MESSAGE.allFailed, false);
    try {
      body = await collectStream(result.body);
    } catch {
      return failure(ERROR_MESSAGE.allFailed, false);
    }
  } else {
    body = result.body;
  }
  // A status line has no place on a socket: a non-JSON error page becomes a JSON-RPC error.
  if (!isJsonRpcText(body)) {
    if (result.status < 300 && body.length === 0) body = Buffer.alloc(0);
    else return failure(`Upstream answered HTTP ${result.status} without a JSON-RPC body`, false);
  }
  return { body, forwarded: true, timedOut: false, node: result.node, credits: result.credits };
}

/** Routes a parsed request like an HTTP one; resolves with how routing ended. */
export function routeRequest(
  request: RpcRequest,
  headers: ForwardHeaders,
  ctx: RouteContext,
): Promise<RouteResult> {
  return new Promise((resolve) =>
    route(request, headers, ctx, (result, done) => done(result), resolve),
  );
}

/** An answer that carried a JSON-RPC error instead of a result. */
export class UpstreamCallError extends Error {
  constructor(
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

/**
 * cascade's own call (a gap fill): routed and billed like any request; resolves with the
 * parsed `result`, rejects with an UpstreamCallError when no node answered with one.
 */
export async function callThroughRouter(
  ctx: RouteContext,
  registry: MethodRegistry,
  method: string,
  paramsJson: string,
): Promise<unknown> {
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"${method}","params":${paramsJson}}`);
  const parsed = parseRequest(body, registry);
  if (!parsed.ok) throw new UpstreamCallError(undefined, `cannot build ${method}`);
  const answer = await answerOf(await routeRequest(parsed.request, undefined, ctx), '1');
  let json: { result?: unknown; error?: { code?: number; message?: string } };
  try {
    json = JSON.parse(answer.body.toString('utf8')) as typeof json;
  } catch {
    throw new UpstreamCallError(undefined, `${method}: unreadable answer`);
  }
  if (json.error !== undefined || !('result' in json)) {
    throw new UpstreamCallError(
      json.error?.code,
      `${method}: ${json.error?.message ?? 'no result'}`,
    );
  }
  return json.result;
}
