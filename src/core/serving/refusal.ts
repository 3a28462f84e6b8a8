/**
 * The one refusal mapping: what cascade answers, whichever door a request came by (an HTTP
 * request or batch, a WebSocket message or batch), when it will not route it — a body that is
 * not JSON-RPC, an empty or oversized batch, a message over a rate limit. A refusal says how it
 * travels on HTTP (status), what the client reads (JSON-RPC code and message) and what it counts
 * as (RequestOutcome, recorded like any answer: serving/request-record.ts). The doors add only
 * how the bytes travel. routing/route-answer.ts is the same for requests that were routed.
 */
import { RequestOutcome } from '../metrics.js';
import { ERROR_MESSAGE, RPC_ERROR } from '../protocol/error-body.js';
import type { RequestProblem } from '../protocol/rpc-request.js';
import { failure, failureJson, type RouteFailure } from '../routing/route-answer.js';

/** A request cascade refuses to route: HTTP status, JSON-RPC error, outcome (as a RouteFailure). */
export type Refusal = RouteFailure;

/** EIP-1474 "Limit exceeded" (also what a socket over its subscription limit is answered). */
export const LIMIT_EXCEEDED = -32005;

/** Not JSON, or JSON that is not a request object (or a batch of them). */
export const PARSE_ERROR = failure(
  400,
  RPC_ERROR.parseError,
  ERROR_MESSAGE.parseError,
  RequestOutcome.badRequest,
);
/** `[]`: a batch of nothing (JSON-RPC 2.0 §6: one Invalid Request error). */
export const EMPTY_BATCH = failure(
  400,
  RPC_ERROR.invalidRequest,
  ERROR_MESSAGE.invalidRequest,
  RequestOutcome.badRequest,
);
/** A socket batch naming a subscribe or unsubscribe method: its answer could not be ordered. */
export const SUBSCRIBE_IN_BATCH = failure(
  400,
  RPC_ERROR.invalidRequest,
  'Subscribe and unsubscribe calls cannot be batched; send each as its own message',
  RequestOutcome.badRequest,
);

/** What a body parseRequest could not read is refused with (its id: the parse's idJson). */
export function parseRefusal(problem: RequestProblem): Refusal {
  return problem === 'empty_batch' ? EMPTY_BATCH : PARSE_ERROR;
}

/** A batch over `[server] max_batch_size`. */
export function batchTooLarge(size: number, max: number): Refusal {
  return failure(
    400,
    RPC_ERROR.invalidRequest,
    `Batch of ${size} requests exceeds the limit of ${max} (server.max_batch_size)`,
    RequestOutcome.badRequest,
  );
}

/** An HTTP body over `[server] max_body_bytes` (a socket message that big closes with 1009). */
export function bodyTooLarge(maxBytes: number): Refusal {
  return failure(
    413,
    RPC_ERROR.invalidRequest,
    `Request body exceeds the ${maxBytes}-byte limit (server.max_body_bytes)`,
    RequestOutcome.badRequest,
  );
}

/** A socket message over `[server] ws_max_messages_per_second`. */
export function tooManyMessages(limit: number): Refusal {
  return failure(
    429,
    LIMIT_EXCEEDED,
    `Too many messages: at most ${limit} per second on one connection (server.ws_max_messages_per_second)`,
    RequestOutcome.badRequest,
  );
}

/** The refusal as the JSON-RPC error text a client reads, under `idJson` (written as sent). */
export function refusalJson(refused: Refusal, idJson: string): string {
  return failureJson(refused, idJson);
}

/**
 * A refusal of a whole batch that cascade could read (its caller's key, say) as a batch answer:
 * one error per element, under each element's own id, in order — what a batch client matches
 * answers by. Notifications are owed nothing; a batch of only notifications gets the single
 * error object with a null id (a batch answer may not be an empty array).
 */
export function batchRefusalJson(refused: Refusal, ids: readonly (string | undefined)[]): string {
  const owed = ids.filter((id): id is string => id !== undefined);
  if (owed.length === 0) return failureJson(refused, 'null');
  return `[${owed.map((id) => failureJson(refused, id)).join(',')}]`;
}
