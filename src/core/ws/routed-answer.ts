/**
 * Requests answered on a WebSocket — a client's plain request, or cascade's own gap-fill call —
 * and their answers as one message. What the answer is comes from the one answer mapping
 * (core/routing/route-answer.ts), as for HTTP; only the way back differs: a big answer HTTP
 * would stream is collected into one message, and bytes that are not JSON-RPC (a status line
 * has no place on a socket) become cascade's error.
 */
import { Writable } from 'node:stream';
import { RequestOutcome } from '../metrics.js';
import { UpstreamStream } from '../node/upstream-stream.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { parseRequest } from '../protocol/rpc-request.js';
import {
  ALL_FAILED,
  failureJson,
  failureOf,
  notJsonRpc,
  unfitForMessage,
  type RouteFailure,
} from '../routing/route-answer.js';
import { answerWithClientId } from '../routing/batch-answer.js';
import type { RouteContext, RouteResult } from '../routing/route-context.js';
import { servedResult } from '../serving/serve-request.js';

/** Largest routed answer collected for one WebSocket message. */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** A routed request's answer, as one message. */
export interface RoutedAnswer {
  /** The bytes to send (an upstream's answer, or cascade's error with the request's id). */
  readonly body: Buffer;
  /** What the request counts as (RequestOutcome), as the same result over HTTP would. */
  readonly outcome: number;
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

/** An answer's bytes as one message (a stream collected), or the failure they stand for. */
async function messageOf(
  status: number,
  body: Buffer | UpstreamStream,
): Promise<Buffer | RouteFailure> {
  let bytes: Buffer;
  if (body instanceof UpstreamStream) {
    try {
      bytes = await collectStream(body);
    } catch {
      return ALL_FAILED;
    }
  } else {
    bytes = body;
  }
  return unfitForMessage(status, bytes, false) ?? bytes;
}

function failed(failure: RouteFailure, idJson: string, credits: number): RoutedAnswer {
  const body = Buffer.from(failureJson(failure, idJson));
  return { body, outcome: failure.outcome, node: undefined, credits };
}

/** Turns how routing ended into the message for the socket. */
export async function answerOf(result: RouteResult, idJson: string): Promise<RoutedAnswer> {
  const failure = failureOf(result);
  if (failure !== undefined || result.kind !== 'answer') {
    return failed(failure ?? ALL_FAILED, idJson, result.credits);
  }
  const { node, credits, status } = result;
  const message = await messageOf(status, result.body);
  if (message === ALL_FAILED) return failed(message, idJson, credits);
  const forwarded = RequestOutcome.forwarded;
  // A node's final answer a socket cannot carry as it is (an HTML error page) goes as cascade's
  // error, but counts as HTTP counts the same answer it relays: forwarded.
  if (!Buffer.isBuffer(message)) return { ...failed(message, idJson, credits), outcome: forwarded };
  if (status < 300) return { body: message, outcome: forwarded, node, credits };
  // A non-2xx answer may not carry the client's id (`{"message":…}`, `"id":null`): on a socket
  // the id is all that ties it to its request, so it gets the client's, as a batch element does.
  const labelled = answerWithClientId(message, idJson);
  if (labelled === undefined)
    return { ...failed(notJsonRpc(status), idJson, credits), outcome: forwarded };
  return { body: Buffer.from(labelled), outcome: forwarded, node, credits };
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
  // Not a client's request: routed as one, but past the cache (nothing of it is a client's).
  const result = await servedResult(parsed.request, undefined, { route: ctx, cache: undefined });
  const answer = await answerOf(result, '1');
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
