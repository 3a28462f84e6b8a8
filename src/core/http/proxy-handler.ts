import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { RequestOutcome, type ProxyMetrics } from '../metrics.js';
import type { ForwardHeaders } from '../node/http-transport.js';
import { UpstreamStream } from '../node/upstream-stream.js';
import { ERROR_MESSAGE, RPC_ERROR, WRITE_UNCONFIRMED_MESSAGE } from '../protocol/error-body.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import {
  parseRequest,
  readIdJson,
  type BatchElement,
  type RpcRequest,
} from '../protocol/rpc-request.js';
import { routeBatch } from '../routing/batch-route.js';
import type { RouteContext, RouteResult } from '../routing/route-context.js';
import { route } from '../routing/route.js';
import { logAccess } from './access-log.js';
import { pipeAnswer, sendAnswer } from './compression.js';
import { BodyReader, readBody } from './read-body.js';
import { sendRpcError } from './respond.js';

/** Client headers passed on to upstreams: tracing ids and client identification only. */
export const FORWARDED_HEADERS = [
  'traceparent',
  'tracestate',
  'x-request-id',
  'solana-client',
] as const;

/** Everything the proxy route needs. */
export interface ProxyHandlerContext {
  readonly route: RouteContext;
  readonly registry: MethodRegistry;
  readonly metrics: ProxyMetrics;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  readonly maxBatchSize: number;
  /** Upstream answers this big are gzipped for clients that ask; 0 = never. */
  readonly compressionMinBytes: number;
  /** Peers whose X-Forwarded-For names the client (access log); undefined = none. */
  readonly trustedProxies: BlockList | undefined;
  readonly accessLog: boolean;
  /** Requests answered, by REQUEST_OUTCOMES index (the shutdown summary reads it). */
  readonly counts: Float64Array;
  /** Set when shutdown starts: answers then close their connection. */
  readonly drain: { active: boolean };
  /** `[server] routing_headers`: answers say which node(s) served, after how many attempts, at what price. */
  readonly routingHeaders: boolean;
}

/** The routing headers (only with `routing_headers = true`: they disclose provider names). */
function setRoutingHeaders(
  res: ServerResponse,
  node: string | undefined,
  attempts: number,
  credits: number,
): void {
  if (node !== undefined && node !== '') res.setHeader('x-cascade-node', node);
  res.setHeader('x-cascade-attempts', attempts);
  res.setHeader('x-cascade-credits', credits);
}

function forwardHeaders(req: IncomingMessage): ForwardHeaders {
  let headers: Record<string, string> | undefined;
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') (headers ??= {})[name] = value;
  }
  return headers;
}

/**
 * While the server drains, an answer says `Connection: close`: the client opens a new
 * connection (to another instance) instead of sending on one about to be closed.
 */
function lastOnConnection(exchange: Exchange): void {
  if (exchange.ctx.drain.active) exchange.res.shouldKeepAlive = false;
}

/** Records the request's outcome and duration, once per request; returns the seconds. */
function finish(exchange: Exchange, outcome: number): number {
  const ctx = exchange.ctx;
  const seconds = (ctx.clock.now() - exchange.startedAt) / 1000;
  if (exchange.counted) return seconds;
  exchange.counted = true;
  ctx.counts[outcome]!++;
  ctx.metrics.request(outcome, seconds);
  return seconds;
}

function respondRouted(exchange: Exchange, request: RpcRequest, result: RouteResult): number {
  const { req, res, ctx } = exchange;
  if (ctx.routingHeaders) {
    const node = result.kind === 'answer' ? result.node : undefined;
    setRoutingHeaders(res, node, result.attempts, result.credits);
  }
  if (result.kind === 'answer') {
    const contentType = result.contentType ?? 'application/json';
    const body = result.body;
    const minBytes = ctx.compressionMinBytes;
    if (!(body instanceof UpstreamStream)) {
      sendAnswer(req, res, result.status, contentType, body, minBytes);
      return RequestOutcome.forwarded;
    }
    if (!body.failed) {
      pipeAnswer(req, res, result.status, contentType, body, minBytes);
      return RequestOutcome.forwarded;
    }
    // The answer broke before any of it reached the client: a 502, never a 200 cut short.
  }
  const idJson = readIdJson(request);
  if (result.kind === 'timeout') {
    sendRpcError(res, 504, RPC_ERROR.serverError, ERROR_MESSAGE.globalTimeout, idJson);
    return RequestOutcome.timeout;
  }
  const unsure = result.kind === 'exhausted' && result.unsure === true;
  const message = unsure ? WRITE_UNCONFIRMED_MESSAGE : ERROR_MESSAGE.allFailed;
  sendRpcError(res, 502, RPC_ERROR.serverError, message, idJson);
  return RequestOutcome.badGateway;
}

/** Answers a request cascade refuses to route (400, 413) and records it. */
function reject(
  exchange: Exchange,
  answer: { status: number; code: number; message: string; idJson: string },
): void {
  const ctx = exchange.ctx;
  lastOnConnection(exchange);
  sendRpcError(exchange.res, answer.status, answer.code, answer.message, answer.idJson);
  const seconds = finish(exchange, RequestOutcome.badRequest);
  if (ctx.accessLog) {
    logAccess(
      ctx,
      exchange.req,
      {
        method: null,
        node: null,
        status: answer.status,
        error: answer.message,
        attempts: 0,
        credits: 0,
      },
      RequestOutcome.badRequest,
      seconds,
    );
  }
}

/** Parses the body and routes it; the answer comes back to `exchange.routed` (or a batch's promise). */
function proxyRequest(exchange: Exchange, body: Buffer): void {
  const { req, ctx } = exchange;
  const parsed = parseRequest(body, ctx.registry);
  if (!parsed.ok) {
    const empty = parsed.problem === 'empty_batch';
    reject(exchange, {
      status: 400,
      code: empty ? RPC_ERROR.invalidRequest : RPC_ERROR.parseError,
      message: empty ? ERROR_MESSAGE.invalidRequest : ERROR_MESSAGE.parseError,
      idJson: empty ? 'null' : parsed.idJson,
    });
    return;
  }
  const batch = parsed.request.batch;
  if (batch !== undefined) {
    proxyBatch(batch, exchange).catch((err: unknown) => exchange.failed(err));
    return;
  }
  exchange.rpc = parsed.request;
  route(parsed.request, forwardHeaders(req), ctx.route, onRouted, exchange);
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
  const ctx = exchange.ctx;
  const request = exchange.rpc!;
  lastOnConnection(exchange);
  const outcome = respondRouted(exchange, request, result);
  const seconds = finish(exchange, outcome);
  if (ctx.accessLog) {
    const answered = result.kind === 'answer' && outcome === RequestOutcome.forwarded;
    const fields = {
      method: request.method,
      node: answered ? result.node : null,
      status: answered ? result.status : null,
      attempts: result.attempts,
      credits: result.credits,
    };
    logAccess(ctx, exchange.req, fields, outcome, seconds);
  }
}

async function proxyBatch(batch: readonly BatchElement[], exchange: Exchange): Promise<void> {
  const { req, res, ctx } = exchange;
  ctx.metrics.batchSize(batch.length);
  if (batch.length > ctx.maxBatchSize) {
    const message = `Batch of ${batch.length} requests exceeds the limit of ${ctx.maxBatchSize} (server.max_batch_size)`;
    reject(exchange, {
      status: 400,
      code: RPC_ERROR.invalidRequest,
      message,
      idJson: 'null',
    });
    return;
  }
  const result = await routeBatch(batch, forwardHeaders(req), ctx.route);
  lastOnConnection(exchange);
  if (ctx.routingHeaders)
    setRoutingHeaders(res, result.nodes.join(','), result.attempts, result.credits);
  if (result.body === '') {
    // Only notifications: nothing is owed (JSON-RPC 2.0 §6), so no body at all.
    res.writeHead(204).end();
  } else {
    // Per-element errors travel inside the array, so the HTTP answer is 200 either way.
    sendAnswer(req, res, 200, 'application/json', result.body, ctx.compressionMinBytes);
  }
  // A batch of nothing but invalid elements is the client's mistake, not an upstream failure.
  const outcome = result.forwarded
    ? RequestOutcome.forwarded
    : batch.every((element) => element.method === undefined)
      ? RequestOutcome.badRequest
      : result.timedOut
        ? RequestOutcome.timeout
        : RequestOutcome.badGateway;
  const seconds = finish(exchange, outcome);
  if (ctx.accessLog) {
    const fields = {
      method: `batch[${batch.length}]`,
      nodes: result.nodes,
      attempts: result.attempts,
      credits: result.credits,
    };
    logAccess(ctx, exchange.req, fields, outcome, seconds);
  }
}

/**
 * One proxied request: reads its body, hears how routing ended, answers. One object per
 * request carries what the callbacks need, so none of them is a closure.
 */
class Exchange extends BodyReader {
  /** The parsed single request being routed. */
  rpc: RpcRequest | undefined = undefined;
  /** Whether the request's outcome is recorded (exactly once, whatever path answered it). */
  counted = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly ctx: ProxyHandlerContext,
    readonly startedAt: number,
  ) {
    super(ctx.maxBodyBytes);
  }

  protected bodyRead(body: Buffer | undefined): void {
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
    sendRpcError(this.res, 500, -32603, 'Internal error', 'null');
    try {
      // Still one count per request: cascade failed to serve it, as with a 502.
      finish(this, RequestOutcome.badGateway);
    } catch {
      // Recording is what broke; the cause is logged above and the client answered.
    }
  }

  #tooLarge(): void {
    const { req, res, ctx } = this;
    // The rest of an oversized body is never read: close the connection after answering.
    res.setHeader('connection', 'close');
    res.once('finish', () => req.destroy());
    const message = `Request body exceeds the ${ctx.maxBodyBytes}-byte limit (server.max_body_bytes)`;
    reject(this, {
      status: 413,
      code: RPC_ERROR.invalidRequest,
      message,
      idJson: 'null',
    });
  }
}

/** Handles POST / and POST /send-request: read → parse → route → respond → record. */
export function handleProxy(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ProxyHandlerContext,
): void {
  readBody(req, new Exchange(req, res, ctx, ctx.clock.now()));
}
