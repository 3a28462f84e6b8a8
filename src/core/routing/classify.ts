/**
 * Answer classification for one upstream attempt (docs/routing.md, "Whose fault"), in order:
 *
 * 1. no response (connect/TLS error, deadline before headers) → retry, penalize
 * 2. headers but no complete body → retry, penalize
 * 3. a status that means "your request is wrong" (400, 402, 404–418, 421–426, 428, 431, 451)
 *    → forward as final, no penalty, no measurement — unless its body is an eth_getLogs limit
 *    (QuickNode's 413): retry elsewhere, no penalty
 * 4. a small body (≤ 512 B) or one containing `"error"` is read:
 *    - unreadable: a notification's 2xx answer is its success whatever the body (a node owes a
 *      notification nothing); otherwise retry and penalize — a malformed answer is the node's
 *    - a JSON-RPC error: an eth_getLogs range or result limit (protocol/logs-limit-errors.ts)
 *      first — retry elsewhere, no penalty, the node learns its limit — even with a client
 *      code (Alchemy's -32600, Infura's -32602); then by the error table (upstream-errors.ts):
 *      the client's own codes (-32700/-32600/-32601/-32602) and deterministic execution errors
 *      are final with no penalty; node-state errors retry (penalized only when the node says it is unhealthy
 *      or throttled); unknown errors retry and are judged by agreement (see route.ts)
 * 5. 2xx → success: forward, measure latency, clear the penalty
 * 6. anything else (429, 5xx, 401, 403, …) → forward as final, penalize
 *
 * Large bodies without `"error"` are never parsed: answers are far larger than requests and
 * parsing them would cost more than the whole proxy hop.
 */
import { AttemptOutcome } from '../metrics.js';
import { isNotification, type RpcRequest } from '../protocol/rpc-request.js';
import { isAlreadyKnown } from '../protocol/already-known.js';
import { errorFault } from '../protocol/upstream-errors.js';
import { isLogsLimit } from '../protocol/logs-limit-errors.js';
import { JsonShape, jsonShape } from '../protocol/json-shape.js';

/** When an attempt's failure costs its node a penalty. */
export type PenaltyRule =
  /** The node's fault: penalize now. */
  | 'now'
  /** Not the node's fault (or not worth taking it out of rotation). */
  | 'never'
  /** An unknown error: the node's fault unless another node answers the request the same way. */
  | 'disputed';

/** What to do with one attempt's result. */
export interface Verdict {
  /** success: forward + measure; final: forward; retry: try the next node. */
  readonly kind: 'success' | 'final' | 'retry';
  readonly penalty: PenaltyRule;
  /** Index into ATTEMPT_OUTCOMES. */
  readonly outcome: number;
  /** A retry whose answer is an upstream JSON-RPC error: relayed if no node does better. */
  readonly relayable: boolean;
}

const verdict = (
  kind: Verdict['kind'],
  penalty: PenaltyRule,
  outcome: number,
  relayable = false,
): Verdict => Object.freeze({ kind, penalty, outcome, relayable });

export const TRANSPORT_ERROR = verdict('retry', 'now', AttemptOutcome.transportError);
export const BODY_ERROR = verdict('retry', 'now', AttemptOutcome.bodyError);
export const INVALID_JSON = verdict('retry', 'now', AttemptOutcome.invalidJson);
export const SUCCESS = verdict('success', 'never', AttemptOutcome.success);
/** The request's own fault, as an HTTP status. */
const CLIENT_HTTP_ERROR = verdict('final', 'never', AttemptOutcome.forwardedHttpError);
/** The request's own fault, as a JSON-RPC error (client codes, deterministic execution errors). */
export const REQUEST_RPC_ERROR = verdict('final', 'never', AttemptOutcome.forwardedRpcError);
/** The node lacks the data for this request; another may have it. */
export const NODE_STATE_ERROR = verdict('retry', 'never', AttemptOutcome.retryableRpcError, true);
/**
 * The node will not serve this eth_getLogs at this size (protocol/logs-limit-errors.ts): a
 * smaller range, or another node, will. Nobody's failure; the node learns its limit from it.
 */
export const LOGS_LIMIT_ERROR = verdict('retry', 'never', AttemptOutcome.retryableRpcError, true);
/** The node says it is unhealthy, or throttles us. */
export const NODE_RPC_ERROR = verdict('retry', 'now', AttemptOutcome.retryableRpcError, true);
/** An error nothing is known about. */
export const UNKNOWN_RPC_ERROR = verdict(
  'retry',
  'disputed',
  AttemptOutcome.retryableRpcError,
  true,
);
const NODE_HTTP_ERROR = verdict('final', 'now', AttemptOutcome.forwardedHttpError);
/**
 * A node's "already known / already processed" for a transaction (protocol/already-known.ts):
 * the request's answer, nobody's fault. The write path makes it a success when an earlier
 * attempt of the same request may have delivered the transaction.
 */
export const ALREADY_KNOWN = verdict('final', 'never', AttemptOutcome.forwardedRpcError);
/** A write the node refused unprocessed (HTTP 429 or 503): safe to send to another node. */
export const WRITE_REFUSED = verdict('retry', 'now', AttemptOutcome.forwardedHttpError, true);
/** A write the provider throttled (a rate-limit JSON-RPC error): unprocessed, like a 429. */
export const WRITE_THROTTLED = verdict('retry', 'now', AttemptOutcome.retryableRpcError, true);

/** Bodies up to this size are always checked for a JSON-RPC error. */
export const VALIDATION_THRESHOLD = 512;
const ERROR_KEY = Buffer.from('"error"', 'latin1');

/** Statuses that say the request itself is wrong: another node would answer the same. */
export function isFinalStatus(status: number): boolean {
  return (
    status === 400 ||
    status === 402 ||
    (status >= 404 && status <= 418) ||
    (status >= 421 && status <= 426) ||
    status === 428 ||
    status === 431 ||
    status === 451
  );
}

/** JSON-RPC codes the client caused; another node would answer the same. */
export function isClientRpcError(code: number): boolean {
  return code === -32700 || code === -32600 || code === -32601 || code === -32602;
}

/** A JSON-RPC error object's code and message, when it has an integer (i32) code. */
export interface RpcErrorFields {
  readonly code: number;
  readonly message: string;
}

/** The `error` member of a parsed answer: its fields, 'none', or 'invalid'. */
export function errorFieldsOf(value: unknown): RpcErrorFields | 'none' | 'invalid' {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const error = (value as { error?: unknown }).error;
  if (error === undefined || error === null) return 'none';
  if (typeof error !== 'object' || Array.isArray(error)) return 'invalid';
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'number' || !Number.isInteger(code) || code < -(2 ** 31) || code >= 2 ** 31) {
    return 'invalid';
  }
  return { code, message: typeof message === 'string' ? message : '' };
}

/** The verdict for a JSON-RPC error answer, from the error table. */
export function errorVerdict(fields: RpcErrorFields): Verdict {
  // Before the client codes: Alchemy and Infura send their range limits as -32600 / -32602.
  if (isLogsLimit(fields.message)) return LOGS_LIMIT_ERROR;
  if (isClientRpcError(fields.code)) return REQUEST_RPC_ERROR;
  switch (errorFault(fields.code, fields.message)) {
    case 'request':
      return REQUEST_RPC_ERROR;
    case 'node_state':
      return NODE_STATE_ERROR;
    case 'node_unhealthy':
    case 'rate_limited':
      return NODE_RPC_ERROR;
    default:
      return UNKNOWN_RPC_ERROR;
  }
}

/** Parses a small answer; undefined when it is not JSON. */
export function parseAnswer(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Reads the JSON-RPC error (if any) of a body. A batch answer (array) is accepted only when
 * the request was a batch; its elements' errors belong to their own elements.
 */
function scanBody(body: Buffer, batch: boolean): Verdict | 'none' | 'invalid' {
  // The byte scan settles nearly every answer; only a top-level `error` needs the parse.
  const shape = jsonShape(body);
  if (shape === JsonShape.object) return 'none';
  if (shape === JsonShape.array) return batch ? 'none' : 'invalid';
  if (shape !== JsonShape.unsure) return 'invalid';
  const parsed = parseAnswer(body);
  if (Array.isArray(parsed)) return batch ? 'none' : 'invalid';
  const fields = errorFieldsOf(parsed);
  return typeof fields === 'string' ? fields : errorVerdict(fields);
}

/**
 * A "your request is wrong" status: final, except a range limit sent with one (QuickNode answers
 * HTTP 413 with its eth_getLogs limit), which another node, or a smaller range, may serve.
 */
function finalStatusVerdict(body: Buffer): Verdict {
  if (body.length > VALIDATION_THRESHOLD * 8 || body.indexOf(ERROR_KEY) === -1) {
    return CLIENT_HTTP_ERROR;
  }
  const fields = errorFieldsOf(parseAnswer(body));
  return typeof fields !== 'string' && isLogsLimit(fields.message)
    ? LOGS_LIMIT_ERROR
    : CLIENT_HTTP_ERROR;
}

/**
 * Classifies an answer that arrived whole (rows 3–6). `request` (a single request) is looked
 * at only when a 2xx answer could not be read: a node owes a notification no answer at all.
 */
export function classifyAnswer(
  status: number,
  body: Buffer,
  batch: boolean,
  request?: RpcRequest,
): Verdict {
  if (isFinalStatus(status)) return finalStatusVerdict(body);
  const success = status >= 200 && status < 300;
  if (body.length <= VALIDATION_THRESHOLD || body.indexOf(ERROR_KEY) !== -1) {
    const scan = scanBody(body, batch);
    if (scan === 'invalid') {
      return success && request !== undefined && isNotification(request) ? SUCCESS : INVALID_JSON;
    }
    if (scan !== 'none') return scan;
  }
  return success ? SUCCESS : NODE_HTTP_ERROR;
}

/** The classifier of a single request's answer (`request` is the RpcRequest that was sent). */
export function classifySingle(status: number, body: Buffer, request: RpcRequest): Verdict {
  return classifyAnswer(status, body, false, request);
}

/**
 * The classifier of a write's answer: as classifySingle, except that an "already known" answer
 * is told apart (ALREADY_KNOWN), and refusals that prove the node did not process the write
 * (429/503, throttling) may go to another node (WRITE_REFUSED, WRITE_THROTTLED) instead of being
 * relayed.
 */
export function classifyWrite(status: number, body: Buffer, request: RpcRequest): Verdict {
  const verdict = classifyAnswer(status, body, false, request);
  if (status === 429 || status === 503) return verdict === SUCCESS ? verdict : WRITE_REFUSED;
  if (verdict !== REQUEST_RPC_ERROR && verdict !== NODE_RPC_ERROR) return verdict;
  const fields = errorFieldsOf(parseAnswer(body));
  if (typeof fields === 'string') return verdict;
  if (verdict === NODE_RPC_ERROR) {
    return errorFault(fields.code, fields.message) === 'rate_limited' ? WRITE_THROTTLED : verdict;
  }
  return isAlreadyKnown(fields.message) ? ALREADY_KNOWN : verdict;
}

/**
 * The agreement key of an error answer (code and message): two nodes that answer a request
 * with equal keys agree that the error is the request's. Undefined when the body has no
 * readable error.
 */
export function errorKeyOf(body: Buffer): string | undefined {
  const fields = errorFieldsOf(parseAnswer(body));
  return typeof fields === 'string' ? undefined : `${fields.code} ${fields.message}`;
}

/**
 * Seconds a 429 or 503 asked us to stay away (Retry-After as seconds or an HTTP date);
 * 0 for any other status or an unreadable header.
 */
export function retryAfterSeconds(
  status: number,
  header: string | undefined,
  nowMs: number,
): number {
  if ((status !== 429 && status !== 503) || header === undefined) return 0;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return 0;
  return Math.max(0, Math.ceil((date - nowMs) / 1000));
}
