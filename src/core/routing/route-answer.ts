/**
 * The one answer mapping (docs/routing.md §3, "Never a synthetic error where an upstream
 * answered"): how routing ended → what the client is answered and what the request counts as
 * (RequestOutcome). Every door reads it — an HTTP request, an HTTP batch, a WebSocket message,
 * a WebSocket batch — and so does the batch driver for its elements; a door only adds how the
 * answer travels (headers and a stream on HTTP, a frame on the socket).
 *
 * The failures are shared constants, so mapping the single-request hot path allocates nothing.
 */
import { RequestOutcome } from '../metrics.js';
import { UpstreamStream } from '../node/upstream-stream.js';
import { jsonShape, JsonShape } from '../protocol/json-shape.js';
import {
  ERROR_MESSAGE,
  RPC_ERROR,
  WRITE_UNCONFIRMED_MESSAGE,
  errorJson,
} from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import type { RouteResult } from './route-context.js';

/**
 * What cascade answers instead of an upstream's answer: HTTP status, JSON-RPC error, outcome.
 * A refusal before routing (serving/refusal.ts) has the same shape.
 */
export interface RouteFailure {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly outcome: number;
}

/** A frozen RouteFailure (a shared constant: mapping one allocates nothing). */
export function failure(
  status: number,
  code: number,
  message: string,
  outcome: number,
): RouteFailure {
  return Object.freeze({ status, code, message, outcome });
}

/** The budget ran out before any node answered. */
export const TIMED_OUT = failure(
  504,
  RPC_ERROR.serverError,
  ERROR_MESSAGE.globalTimeout,
  RequestOutcome.timeout,
);
/** No node answered (or an answer broke before any of it reached the client). */
export const ALL_FAILED = failure(
  502,
  RPC_ERROR.serverError,
  ERROR_MESSAGE.allFailed,
  RequestOutcome.badGateway,
);
/** A write that may have landed and that no node confirmed: never "all failed". */
export const WRITE_UNCONFIRMED = failure(
  502,
  RPC_ERROR.serverError,
  WRITE_UNCONFIRMED_MESSAGE,
  RequestOutcome.badGateway,
);
/** Routing threw (a bug): counted like a 502, as cascade failed to serve it. */
export const INTERNAL_ERROR = failure(500, -32603, 'Internal error', RequestOutcome.badGateway);

/**
 * How a routed request failed, or undefined when its answer is the client's (relay it). A
 * stream that already broke counts as no answer: a 502, never a 200 cut short.
 */
export function failureOf(result: RouteResult): RouteFailure | undefined {
  switch (result.kind) {
    case 'answer':
      return result.body instanceof UpstreamStream && result.body.failed ? ALL_FAILED : undefined;
    case 'timeout':
      return TIMED_OUT;
    case 'exhausted':
      return result.unsure === true ? WRITE_UNCONFIRMED : ALL_FAILED;
    case 'failed':
      return INTERNAL_ERROR;
    case 'refused':
      return result.refusal;
  }
}

/** What a routed single request counts as. */
export function outcomeOf(result: RouteResult): number {
  return failureOf(result)?.outcome ?? RequestOutcome.forwarded;
}

/** A failure as the JSON-RPC error object text a message or a batch element carries. */
export function failureJson(failure: RouteFailure, idJson: string): string {
  return errorJson(failure.code, failure.message, idJson);
}

/** The text of a batch element no node answered (and no upstream error to relay). */
export function unansweredJson(timedOut: boolean, idJson: string): string {
  return failureJson(timedOut ? TIMED_OUT : ALL_FAILED, idJson);
}

function startsWithBrace(body: Buffer, orBracket: boolean): boolean {
  for (const byte of body) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    return byte === 0x7b || (orBracket && byte === 0x5b);
  }
  return false;
}

/**
 * Where answers travel as JSON-RPC messages (a socket frame, an element of a batch array) there
 * is no status line: bytes that are not JSON-RPC — an HTML error page, a bare status — become
 * cascade's error. A whole message may be an object or an array, or empty for a notification's
 * 2xx; a batch element must be a JSON object. Undefined: the bytes can be carried as they are.
 */
export function unfitForMessage(
  status: number,
  body: Buffer,
  element: boolean,
): RouteFailure | undefined {
  if (element) {
    const shape = jsonShape(body);
    const isObject =
      shape === JsonShape.object || (shape === JsonShape.unsure && startsWithBrace(body, false));
    if (isObject) return undefined;
  } else if (startsWithBrace(body, true) || (status < 300 && body.length === 0)) {
    return undefined;
  }
  return notJsonRpc(status);
}

/**
 * The error for an upstream answer whose bytes are not JSON-RPC (an HTML page, a bare status):
 * the one wording, wherever such an answer must travel as a JSON-RPC message.
 */
export function notJsonRpc(status: number): RouteFailure {
  return failure(
    502,
    RPC_ERROR.serverError,
    `Upstream answered HTTP ${status} without a JSON-RPC body`,
    RequestOutcome.badGateway,
  );
}

/** A write element's route result as its text in the batch array (it is never streamed). */
export function elementJson(result: RouteResult, idJson: string): string {
  if (result.kind === 'failed') throw result.error;
  if (result.kind === 'answer' && Buffer.isBuffer(result.body)) {
    const unfit = unfitForMessage(result.status, result.body, true);
    return unfit === undefined ? result.body.toString('utf8') : failureJson(unfit, idJson);
  }
  return failureJson(failureOf(result) ?? ALL_FAILED, idJson);
}

/** What a routed batch produced, as far as its answer is concerned. */
export interface RoutedBatch {
  /** The JSON array to return, or '' when every element was a notification. */
  readonly body: string;
  /** At least one element was answered by a node (or the cache). */
  readonly forwarded: boolean;
  readonly timedOut: boolean;
}

/** A batch's answer: per-element errors travel inside the array, so the status is 200 or 204. */
export interface BatchAnswer {
  /** 204 when only notifications were sent (nothing is owed, JSON-RPC 2.0 §6); else 200. */
  readonly status: 200 | 204;
  /** The array, or '' with a 204 (no body, no message). */
  readonly body: string;
  readonly outcome: number;
}

/** A routed batch's answer and outcome. */
export function batchAnswerOf(result: RoutedBatch, elements: readonly BatchElement[]): BatchAnswer {
  // A batch of nothing but invalid elements is the client's mistake, not an upstream failure.
  const outcome = result.forwarded
    ? RequestOutcome.forwarded
    : elements.every((element) => element.method === undefined)
      ? RequestOutcome.badRequest
      : result.timedOut
        ? RequestOutcome.timeout
        : RequestOutcome.badGateway;
  return { status: result.body === '' ? 204 : 200, body: result.body, outcome };
}
