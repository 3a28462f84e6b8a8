/**
 * POST / and POST /send-request: read the body, parse it, serve it (core/serving: the response
 * cache, then routing), answer (what with: core/routing/route-answer.ts), record. A single
 * request runs as callbacks end to end; a batch goes to proxy-batch.ts.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { RequestOutcome } from '../metrics.js';
import { UpstreamStream } from '../node/upstream-stream.js';
import { parseRequest, readIdJson, type RpcRequest } from '../protocol/rpc-request.js';
import { ALL_FAILED, INTERNAL_ERROR, failureOf } from '../routing/route-answer.js';
import type { RouteResult } from '../routing/route-context.js';
import { bodyTooLarge, parseRefusal } from '../serving/refusal.js';
import { serveRequest } from '../serving/serve-request.js';
import type { PathKey } from '../keys/presented-key.js';
import type { KeyedCaller } from '../serving/key-gate.js';
import { logAccess } from './access-log.js';
import { pipeAnswer, sendAnswer } from './compression.js';
import {
  finish,
  forwardHeaders,
  lastOnConnection,
  reject,
  setRoutingHeaders,
  type ExchangeState,
  type ProxyHandlerContext,
} from './exchange-record.js';
import {
  callerOf,
  isCallerRefusal,
  limitCorsToCaller,
  setCreditsRemaining,
  setRefusalHeaders,
} from './key-caller.js';
import { proxyBatch, refuseOversizeBatch } from './proxy-batch.js';
import { readBody, type BodyReader } from './read-body.js';
import { sendRpcError } from './respond.js';

export { forwardHeaders, type ProxyHandlerContext } from './exchange-record.js';

function respondRouted(exchange: Exchange, request: RpcRequest, result: RouteResult): number {
  const { req, res, ctx } = exchange;
  if (ctx.cache?.responseHeader) {
    res.setHeader('x-cascade-cache', (result.kind === 'answer' && result.cache) || 'miss');
  }
  if (ctx.creditsRemainingHeader) setCreditsRemaining(res, exchange.caller);
  if (ctx.routingHeaders) {
    const node = result.kind === 'answer' ? result.node : undefined;
    setRoutingHeaders(res, node, result.attempts, result.credits);
  }
  const failure = failureOf(result);
  if (failure === undefined && result.kind === 'answer') {
    const contentType = result.contentType ?? 'application/json';
    const body = result.body;
    const minBytes = ctx.compressionMinBytes;
    // A big answer stays a stream from the node to the client: never buffered here.
    if (body instanceof UpstreamStream)
      pipeAnswer(req, res, result.status, contentType, body, minBytes);
    else sendAnswer(req, res, result.status, contentType, body, minBytes);
    return RequestOutcome.forwarded;
  }
  if (result.kind === 'refused') setRefusalHeaders(res, result.refusal);
  const { status, code, message, outcome } = failure ?? ALL_FAILED;
  sendRpcError(res, status, code, message, readIdJson(request));
  return outcome;
}

/** Parses the body and routes it; the answer comes back to `exchange.routed` (or a batch's promise). */
function proxyRequest(exchange: Exchange, body: Buffer): void {
  const { req, ctx } = exchange;
  const parsed = parseRequest(body, ctx.registry);
  if (!parsed.ok) {
    reject(exchange, parseRefusal(parsed.problem), parsed.idJson);
    return;
  }
  const batch = parsed.request.batch;
  if (batch !== undefined && refuseOversizeBatch(batch, exchange)) return;
  if (ctx.keys.enabled && !identify(exchange, parsed.request)) return;
  if (batch !== undefined) {
    proxyBatch(batch, exchange).catch((err: unknown) => exchange.failed(err));
    return;
  }
  exchange.rpc = parsed.request;
  serveRequest(parsed.request, forwardHeaders(req), ctx, onRouted, exchange, exchange.caller);
}

/**
 * Finds the request's client key; false when it is refused (answered here, 401, 403 or 429:
 * under the request's id, or for a batch one error per element under each element's id).
 */
function identify(exchange: Exchange, request: RpcRequest): boolean {
  const { req, res, ctx } = exchange;
  const who = callerOf(
    req,
    exchange.headers,
    ctx.keys,
    ctx.trustedProxies,
    exchange.path,
    ctx.chain,
  );
  if (isCallerRefusal(who)) {
    // The CORS headers the path set stay: a page that may call here (cors_origins, or a key's
    // origins) reads why it was refused (a mistyped or revoked key, Retry-After) instead of an
    // opaque network error. The refusal holds nothing a curl call would not show.
    setRefusalHeaders(res, who);
    const batch = request.batch;
    if (batch === undefined) reject(exchange, who, readIdJson(request));
    else
      reject(
        exchange,
        who,
        'null',
        batch.map((element) => element.idJson),
      );
    return false;
  }
  exchange.caller = who;
  limitCorsToCaller(exchange.headers, res, who, ctx.cors);
  return true;
}

/** Where routing reports how a single request ended. */
function onRouted(result: RouteResult, exchange: Exchange): void {
  if (result.kind === 'failed') {
    exchange.failed(result.error);
    return;
  }
  try {
    answerRouted(exchange, result);
  } catch (err) {
    // A stream that was never piped would hold its permit and buffer the upstream forever.
    if (result.kind === 'answer' && result.body instanceof UpstreamStream) {
      result.body.abort(new Error('answer could not be relayed'));
    }
    exchange.failed(err);
  }
}

/** Answers a routed single request and records it. */
function answerRouted(exchange: Exchange, result: RouteResult): void {
  const request = exchange.rpc!;
  lastOnConnection(exchange);
  const outcome = respondRouted(exchange, request, result);
  const seconds = finish(exchange, outcome);
  if (exchange.ctx.accessLog) logRouted(exchange, request, result, outcome, seconds);
}

/** The access-log line of a routed single request (--access-log). */
function logRouted(
  exchange: Exchange,
  request: RpcRequest,
  result: RouteResult,
  outcome: number,
  seconds: number,
): void {
  const answered = result.kind === 'answer' && outcome === RequestOutcome.forwarded;
  const failure = answered ? undefined : failureOf(result);
  const fields = {
    method: request.method,
    // The node that answered; for a key's refusal of an answer too big for it, the one asked.
    node: answered ? result.node : result.kind === 'refused' ? (result.node ?? null) : null,
    // What the client got, as the refusals before routing log it (exchange-record.ts reject).
    status: exchange.res.statusCode,
    ...(failure !== undefined ? { error: failure.message } : {}),
    attempts: result.attempts,
    credits: result.credits,
    ...(result.kind === 'answer' && result.cache ? { cache: result.cache } : {}),
    ...(exchange.caller ? { key: exchange.caller.key.name } : {}),
  };
  logAccess(exchange.ctx, exchange.req, fields, outcome, seconds);
}

/**
 * One proxied request: reads its body, hears how routing ended, answers. One object per
 * request carries what the callbacks need, so none of them is a closure; it extends nothing
 * (read-body.ts says why).
 */
class Exchange implements BodyReader, ExchangeState {
  firstChunk: Buffer | undefined = undefined;
  moreChunks: Buffer[] | undefined = undefined;
  size = 0;
  readonly limit: number;
  /** The parsed single request being routed. */
  rpc: RpcRequest | undefined = undefined;
  counted = false;
  caller: KeyedCaller | undefined = undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly ctx: ProxyHandlerContext,
    readonly startedAt: number,
    /** What its path resolved to: the client key it carried (`/<key>`, `/solana/<key>`), if any. */
    readonly path: PathKey,
    /** `req.headers`, as the server read them once. */
    readonly headers: IncomingHttpHeaders,
  ) {
    this.limit = ctx.maxBodyBytes;
  }

  bodyRead(body: Buffer | undefined): void {
    if (body === undefined) return this.#tooLarge();
    try {
      proxyRequest(this, body);
    } catch (err) {
      this.failed(err);
    }
  }

  /** The last resort when handling a request threw: log it, answer 500 if nothing was sent. */
  failed(err: unknown): void {
    this.ctx.logger.error({ err }, 'request failed unexpectedly');
    const { status, code, message, outcome } = INTERNAL_ERROR;
    sendRpcError(this.res, status, code, message, 'null');
    try {
      // Still one count per request: cascade failed to serve it, as with a 502.
      finish(this, outcome);
    } catch {
      // Recording is what broke; the cause is logged above and the client answered.
    }
  }

  #tooLarge(): void {
    const { req, res, ctx } = this;
    // The rest of an oversized body is never read: close the connection after answering.
    res.setHeader('connection', 'close');
    res.once('finish', () => req.destroy());
    reject(this, bodyTooLarge(ctx.maxBodyBytes), 'null');
  }
}

/**
 * Handles a POST to a chain's proxy path (`/`, `/send-request`, `/solana`, …): read → parse →
 * route → respond → record, with `ctx` the chain's context.
 */
export function handleProxy(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ProxyHandlerContext,
  path: PathKey,
  headers: IncomingHttpHeaders,
): void {
  readBody(req, new Exchange(req, res, ctx, ctx.clock.now(), path, headers), headers);
}
