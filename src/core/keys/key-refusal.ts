/**
 * How cascade says no to a client key (issue 27): HTTP status, JSON-RPC error, and for 429s
 * when to come back. Shaped like routing's RouteFailure, so every door answers a refusal with
 * the one answer mapping. A refusal is decided before any node is chosen: it touches no node,
 * books no credit and says nothing about any node's health.
 */
import { HOW_TO_PASS_A_KEY } from '../config/key-types.js';
import { RequestOutcome } from '../metrics.js';

/** Why a key check refused a call (`outcome` label of rpc_key_requests_total). */
export type RefusalReason =
  | 'no_key'
  | 'unknown_key'
  | 'revoked'
  | 'failed_checks'
  | 'method'
  | 'params'
  | 'origin'
  | 'rate_limit'
  | 'per_ip_rate_limit'
  | 'concurrency'
  | 'budget'
  | 'batch_size'
  | 'chain'
  // Guards of heavy reads (issue 29: keys/heavy-read-refusal.ts).
  | 'filters'
  | 'answer_size'
  | 'logs_range'
  | 'logs_plan';

/** A refused call: what the client is answered. */
export interface KeyRefusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  /** rpc_requests_total counts refusals as the client's (bad_request). */
  readonly outcome: number;
  readonly reason: RefusalReason;
  /** Seconds to send in `Retry-After` (429s). */
  readonly retryAfterSeconds?: number;
}

/** JSON-RPC code of "who are you" refusals (401, 403): outside the reserved range. */
export const KEY_ERROR_CODE = -32001;
/** EIP-1474 "Limit exceeded": what clients already know for 429s. */
export const LIMIT_ERROR_CODE = -32005;

function refusal(
  status: number,
  code: number,
  reason: RefusalReason,
  message: string,
  retryAfterSeconds?: number,
): KeyRefusal {
  return Object.freeze({
    status,
    code,
    message,
    outcome: RequestOutcome.badRequest,
    reason,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

export const NO_KEY = refusal(
  401,
  KEY_ERROR_CODE,
  'no_key',
  `A client key is required: ${HOW_TO_PASS_A_KEY}`,
);
export const UNKNOWN_KEY = refusal(
  401,
  KEY_ERROR_CODE,
  'unknown_key',
  `Unknown client key (check it, or ask the operator for one): ${HOW_TO_PASS_A_KEY}`,
);
export const REVOKED_KEY = refusal(
  401,
  KEY_ERROR_CODE,
  'revoked',
  'This client key was revoked; ask the operator for a new one',
);

/** Seconds for Retry-After: whole, at least 1. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export function failedChecks(waitMs: number): KeyRefusal {
  const wait = seconds(waitMs);
  return refusal(
    429,
    LIMIT_ERROR_CODE,
    'failed_checks',
    `Too many failed key checks from this address; retry in ${wait} s`,
    wait,
  );
}

export function methodRefused(key: string, method: string): KeyRefusal {
  return refusal(
    403,
    KEY_ERROR_CODE,
    'method',
    `Method ${method} is not allowed for key '${key}' (keys.methods)`,
  );
}

export function paramsRefused(key: string, method: string): KeyRefusal {
  return refusal(
    403,
    KEY_ERROR_CODE,
    'params',
    `Method ${method} is allowed for key '${key}' only with the first params it lists (keys.params.${method})`,
  );
}

/** The refusal of a key scoped to other chains (`keys.chains`) on `chain`, or undefined. */
export function chainRefusal(
  key: { readonly name: string; readonly config: { readonly chains?: readonly string[] } },
  chain: string,
): KeyRefusal | undefined {
  const chains = key.config.chains;
  if (chains === undefined || chains.length === 0 || chains.includes(chain)) return undefined;
  return chainRefused(key.name, chain, chains);
}

function chainRefused(key: string, chain: string, chains: readonly string[]): KeyRefusal {
  return refusal(
    403,
    KEY_ERROR_CODE,
    'chain',
    `Key '${key}' may not be used on chain '${chain}'; it is scoped to ${chains.join(', ')} (keys.chains)`,
  );
}

export function originRefused(key: string, origin: string): KeyRefusal {
  return refusal(
    403,
    KEY_ERROR_CODE,
    'origin',
    `Pages of ${origin} may not use key '${key}' (keys.origins)`,
  );
}

export function rateRefused(
  key: string,
  limit: number,
  waitMs: number,
  perIp: boolean,
): KeyRefusal {
  const wait = seconds(waitMs);
  return perIp
    ? refusal(
        429,
        LIMIT_ERROR_CODE,
        'per_ip_rate_limit',
        `Key '${key}' allows ${limit} requests per second per client IP (keys.per_ip_rps); retry in ${wait} s`,
        wait,
      )
    : refusal(
        429,
        LIMIT_ERROR_CODE,
        'rate_limit',
        `Key '${key}' is over its rate limit of ${limit} requests per second (keys.rps_limit); retry in ${wait} s`,
        wait,
      );
}

export function concurrencyRefused(key: string, limit: number): KeyRefusal {
  return refusal(
    429,
    LIMIT_ERROR_CODE,
    'concurrency',
    `Key '${key}' already has ${limit} requests in flight, its limit (keys.max_concurrent)`,
    1,
  );
}

/** Where a key's budget comes from, as a refusal names it. */
function budgetSource(setAtRuntime: boolean): string {
  return setAtRuntime ? 'set with `cascade key budget`' : 'keys.monthly_credits';
}

/** What a budget refusal is about: the key, its budget now, and the call it cannot afford. */
export interface BudgetShortfall {
  readonly key: string;
  readonly budget: number;
  /** Whether an operator set the budget at runtime (`cascade key budget`). */
  readonly setAtRuntime: boolean;
  /** Credits booked this period, calls in flight included. */
  readonly used: number;
  /** The least the call can cost (the cheapest price any node asks for its method). */
  readonly cheapest: number;
  readonly method: string;
  /** The next reset, 'YYYY-MM-DD' (00:00 UTC). */
  readonly resetDay: string;
}

/**
 * The call does not fit the key's budget. Spent (or too little left for the call): until
 * `resetDay`, with Retry-After then. A call dearer than the whole budget, which some credits
 * are left of, can never fit: said so, with no Retry-After. `nowMs` is wall-clock ms.
 */
export function budgetRefused(shortfall: BudgetShortfall, nowMs: number): KeyRefusal {
  const { key, budget, used, cheapest, method, resetDay } = shortfall;
  const source = budgetSource(shortfall.setAtRuntime);
  const left = Math.max(0, budget - used);
  if (left > 0 && cheapest > budget) {
    return refusal(
      429,
      LIMIT_ERROR_CODE,
      'budget',
      `Key '${key}' cannot afford ${method}: it costs at least ${cheapest} credits, more than the key's whole budget of ${budget} (${source})`,
    );
  }
  const spent =
    left === 0
      ? `has spent its budget of ${budget} credits (${source})`
      : `has spent its budget of ${budget} credits but ${left} (${source}), less than the ${cheapest} ${method} costs at least`;
  return refusal(
    429,
    LIMIT_ERROR_CODE,
    'budget',
    `Key '${key}' ${spent}; it resets on ${resetDay}`,
    seconds(Date.parse(`${resetDay}T00:00:00Z`) - nowMs),
  );
}

export function batchRefused(key: string, size: number, limit: number): KeyRefusal {
  return refusal(
    400,
    -32600,
    'batch_size',
    `Batch of ${size} requests exceeds key '${key}''s limit of ${limit} (keys.max_batch_size)`,
  );
}
