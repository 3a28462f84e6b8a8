/**
 * What every way of answering a proxied request shares: the handler's context, the exchange's
 * state (one per request), and how an answer is recorded — once per request, whichever path
 * (single, batch, refusal, internal failure) gave it, by the record step both doors share
 * (serving/request-record.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ProxyMetrics } from '../metrics.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { batchRefusalJson, type Refusal } from '../serving/refusal.js';
import { recordRequest } from '../serving/request-record.js';
import type { ClientKeys } from '../keys/client-keys.js';
import type { KeyedCaller } from '../serving/key-gate.js';
import type { ServingContext } from '../serving/serving-context.js';
import type { CorsPolicy } from './cors.js';
import { logAccess } from './access-log.js';
import { sendBytes, sendRpcError } from './respond.js';

const JSON_TYPE = 'application/json';

/** Client headers passed on to upstreams: tracing ids and client identification only. */
export const FORWARDED_HEADERS = [
  'traceparent',
  'tracestate',
  'x-request-id',
  'solana-client',
] as const;

/** Everything the proxy route needs: the serving layer's context (routing, cache) and HTTP's own. */
export interface ProxyHandlerContext extends ServingContext {
  /** The chain this context serves (`[[chains]]` name; `default` for a `[[nodes]]` config). */
  readonly chain: string;
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
  /** Client keys (`enabled` false: none configured, nothing is checked). */
  readonly keys: ClientKeys;
  /** `[server] cors_origins` (undefined: none): who may read keyless answers. */
  readonly cors: CorsPolicy | undefined;
  /** `[server] credits_remaining_header`: keyed answers say what the key's budget has left. */
  readonly creditsRemainingHeader: boolean;
}

/** One request being answered (the proxy handler's Exchange). */
export interface ExchangeState {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly ctx: ProxyHandlerContext;
  /** Clock reading when the request arrived. */
  readonly startedAt: number;
  /** Whether the request's outcome is recorded (exactly once, whatever path answered it). */
  counted: boolean;
  /** The client key the request came with (undefined: keyless, or keys are off). */
  caller: KeyedCaller | undefined;
}

/** The routing headers (only with `routing_headers = true`: they disclose provider names). */
export function setRoutingHeaders(
  res: ServerResponse,
  node: string | undefined,
  attempts: number,
  credits: number,
): void {
  if (node !== undefined && node !== '') res.setHeader('x-cascade-node', node);
  res.setHeader('x-cascade-attempts', attempts);
  res.setHeader('x-cascade-credits', credits);
}

/** Whether a raw header name may be one of FORWARDED_HEADERS: by its length and first letter. */
function mayBeForwarded(name: string): boolean {
  const length = name.length;
  if (length < 10 || length > 13) return false;
  const first = name.charCodeAt(0) | 0x20; // lower case
  return first === 0x74 || first === 0x78 || first === 0x73; // t, x, s
}

/**
 * The tracing and client-identification headers the client sent, for the upstream: as
 * `req.headers` holds them (names in lower case, repeats joined with ", "), read in one pass
 * over the raw header lines instead of four lookups in `req.headers` (each a megamorphic load,
 * on every request, and most requests carry none of them).
 */
export function forwardHeaders(req: IncomingMessage): ForwardHeaders {
  const raw = req.rawHeaders;
  let headers: Record<string, string> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (!mayBeForwarded(name)) continue;
    const lower = name.toLowerCase();
    if (!(FORWARDED_HEADERS as readonly string[]).includes(lower)) continue;
    const value = raw[i + 1]!;
    const before = headers?.[lower];
    (headers ??= {})[lower] = before === undefined ? value : `${before}, ${value}`;
  }
  return headers;
}

/**
 * While the server drains, an answer says `Connection: close`: the client opens a new
 * connection (to another instance) instead of sending on one about to be closed.
 */
export function lastOnConnection(exchange: ExchangeState): void {
  if (exchange.ctx.drain.active) exchange.res.shouldKeepAlive = false;
}

/** Records the request's outcome and duration, once per request; returns the seconds. */
export function finish(exchange: ExchangeState, outcome: number): number {
  const ctx = exchange.ctx;
  if (exchange.counted) return (ctx.clock.now() - exchange.startedAt) / 1000;
  exchange.counted = true;
  return recordRequest(ctx, outcome, exchange.startedAt);
}

/** Answers a request cascade refuses to route (serving/refusal.ts) and records it. */
export function reject(
  exchange: ExchangeState,
  refused: Refusal,
  idJson: string,
  /** A refused batch's elements' ids: the answer is an array with one error per element. */
  batchIds?: readonly (string | undefined)[],
): void {
  const ctx = exchange.ctx;
  lastOnConnection(exchange);
  if (batchIds === undefined) {
    sendRpcError(exchange.res, refused.status, refused.code, refused.message, idJson);
  } else {
    sendBytes(exchange.res, refused.status, JSON_TYPE, batchRefusalJson(refused, batchIds));
  }
  const seconds = finish(exchange, refused.outcome);
  if (ctx.accessLog) {
    logAccess(
      ctx,
      exchange.req,
      {
        method: null,
        ...(exchange.caller ? { key: exchange.caller.key.name } : {}),
        node: null,
        status: refused.status,
        error: refused.message,
        attempts: 0,
        credits: 0,
      },
      refused.outcome,
      seconds,
    );
  }
}
