/**
 * Answer classification for one upstream attempt (behaviour.md §4.7), in its exact order:
 *
 * 1. no response (connect/TLS error, deadline before headers) → retry, penalize
 * 2. headers but no complete body → retry, penalize
 * 3. a status that means "your request is wrong" (400, 402, 404–418, 421–426, 428, 431, 451)
 *    → forward as final, no penalty, no measurement
 * 4. a small body (≤ 512 B) or one containing `"error"` is parsed: unparseable → retry and
 *    penalize; a JSON-RPC error the client caused (-32700/-32600/-32601/-32602) → forward, no
 *    penalty; any other JSON-RPC error → retry and penalize
 * 5. 2xx → success: forward, measure latency, clear the penalty
 * 6. anything else (429, 5xx, 401, 403, …) → forward as final, penalize
 *
 * Large bodies without `"error"` are never parsed: answers are far larger than requests and
 * parsing them would cost more than the whole proxy hop.
 */
import { AttemptOutcome } from '../metrics.js';
import { JsonShape, jsonShape } from '../protocol/json-shape.js';

/** What to do with one attempt's result. */
export interface Verdict {
  /** success: forward + measure; final: forward; retry: try the next node. */
  readonly kind: 'success' | 'final' | 'retry';
  readonly penalize: boolean;
  /** Index into ATTEMPT_OUTCOMES. */
  readonly outcome: number;
}

const verdict = (kind: Verdict['kind'], penalize: boolean, outcome: number): Verdict =>
  Object.freeze({ kind, penalize, outcome });

export const TRANSPORT_ERROR = verdict('retry', true, AttemptOutcome.transportError);
export const BODY_ERROR = verdict('retry', true, AttemptOutcome.bodyError);
const CLIENT_HTTP_ERROR = verdict('final', false, AttemptOutcome.forwardedHttpError);
const INVALID_JSON = verdict('retry', true, AttemptOutcome.invalidJson);
const CLIENT_RPC_ERROR = verdict('final', false, AttemptOutcome.forwardedRpcError);
const RETRYABLE_RPC_ERROR = verdict('retry', true, AttemptOutcome.retryableRpcError);
export const SUCCESS = verdict('success', false, AttemptOutcome.success);
const NODE_HTTP_ERROR = verdict('final', true, AttemptOutcome.forwardedHttpError);

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
function isClientRpcError(code: number): boolean {
  return code === -32700 || code === -32600 || code === -32601 || code === -32602;
}

type ErrorScan = 'invalid' | 'none' | 'client' | 'retryable';

function errorOf(value: unknown): ErrorScan {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'invalid';
  const error = (value as { error?: unknown }).error;
  if (error === undefined || error === null) return 'none';
  if (typeof error !== 'object' || Array.isArray(error)) return 'invalid';
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'number' || !Number.isInteger(code) || code < -(2 ** 31) || code >= 2 ** 31) {
    return 'invalid';
  }
  return isClientRpcError(code) ? 'client' : 'retryable';
}

/**
 * Reads the JSON-RPC error (if any) of a body. A batch answer (array) is accepted only when
 * the request was a batch; its elements' errors belong to their own elements.
 */
function scanBody(body: Buffer, batch: boolean): ErrorScan {
  // The byte scan settles nearly every answer; only a top-level `error` needs the parse.
  const shape = jsonShape(body);
  if (shape === JsonShape.object) return 'none';
  if (shape === JsonShape.array) return batch ? 'none' : 'invalid';
  if (shape !== JsonShape.unsure) return 'invalid';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'invalid';
  }
  if (Array.isArray(parsed)) return batch ? 'none' : 'invalid';
  return errorOf(parsed);
}

/** Classifies an answer that arrived whole (rows 3–6). */
export function classifyAnswer(status: number, body: Buffer, batch: boolean): Verdict {
  if (isFinalStatus(status)) return CLIENT_HTTP_ERROR;
  if (body.length <= VALIDATION_THRESHOLD || body.indexOf(ERROR_KEY) !== -1) {
    const scan = scanBody(body, batch);
    if (scan === 'invalid') return INVALID_JSON;
    if (scan === 'client') return CLIENT_RPC_ERROR;
    if (scan === 'retryable') return RETRYABLE_RPC_ERROR;
  }
  return status >= 200 && status < 300 ? SUCCESS : NODE_HTTP_ERROR;
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
