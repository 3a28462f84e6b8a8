/**
 * How cascade says no to a heavy read (issue 29): a call without a filter its key requires, an
 * answer bigger than its key may have, an eth_getLogs range bigger than the operator allows or
 * whose planned split does not fit a quota or a budget. Each names the rule that refused it;
 * every one but the answer-size cap is decided before any node is asked.
 */
import { RequestOutcome } from '../metrics.js';
import {
  KEY_ERROR_CODE,
  LIMIT_ERROR_CODE,
  type KeyRefusal,
  type RefusalReason,
} from './key-refusal.js';

/** JSON-RPC "Invalid params": the request itself asks too much. */
const INVALID_PARAMS = -32602;

function refusal(status: number, code: number, reason: RefusalReason, message: string): KeyRefusal {
  return Object.freeze({ status, code, message, outcome: RequestOutcome.badRequest, reason });
}

const count = (n: number): string => n.toLocaleString('en-US');

/** A call of `method` without any of the filters `required` lists. */
export function filtersRefused(
  key: string,
  method: string,
  required: readonly string[],
): KeyRefusal {
  return refusal(
    403,
    KEY_ERROR_CODE,
    'filters',
    `Method ${method} is allowed for key '${key}' only with one of the filters ${required.join(', ')} (keys.required_filters.${method})`,
  );
}

/** An answer of `bytes` bytes, over the key's cap. */
export function answerTooLarge(key: string, bytes: number, cap: number): KeyRefusal {
  return refusal(
    413,
    LIMIT_ERROR_CODE,
    'answer_size',
    `The answer (${count(bytes)}+ bytes) exceeds the ${count(cap)}-byte limit of key '${key}' (keys.max_answer_bytes); narrow the request (filters, dataSlice, a smaller range)`,
  );
}

/** An eth_getLogs over `span` blocks where the operator allows `limit`. */
export function logsRangeRefused(span: number, limit: number): KeyRefusal {
  return refusal(
    400,
    INVALID_PARAMS,
    'logs_range',
    `eth_getLogs over ${count(span)} blocks exceeds this endpoint's limit of ${count(limit)} blocks (max_logs_block_range); ask for a smaller range`,
  );
}

/** An eth_getLogs whose `toBlock` (as written) is past Number.MAX_SAFE_INTEGER. */
export function logsHugeRangeRefused(toBlock: string, limit: number): KeyRefusal {
  return refusal(
    400,
    INVALID_PARAMS,
    'logs_range',
    `eth_getLogs toBlock ${toBlock.length > 40 ? `${toBlock.slice(0, 40)}…` : toBlock} is past block ${count(Number.MAX_SAFE_INTEGER)}: the range exceeds this endpoint's limit of ${count(limit)} blocks (max_logs_block_range); ask for a smaller range`,
  );
}

/** What a planned split would be. */
export interface PlanFacts {
  readonly span: number;
  readonly chunks: number;
  readonly limit: number | undefined;
  readonly cost: number;
  readonly node: string;
}

function planText(plan: PlanFacts): string {
  const cut = plan.limit === undefined ? '' : ` of at most ${count(plan.limit)} blocks`;
  return `eth_getLogs over ${count(plan.span)} blocks needs ${count(plan.chunks)} queries${cut} on node ${plan.node}, ${count(plan.cost)} credits`;
}

/**
 * No node's quota holds the plan (`left`: what the planned node has before spillover, and the
 * provider account whose pool that is when the account is the tighter one).
 */
export function planOverQuota(
  plan: PlanFacts,
  left: { readonly left: number; readonly account: string | undefined },
): KeyRefusal {
  const whose =
    left.account === undefined ? 'its quota has' : `its provider account '${left.account}' has`;
  const field = left.account === undefined ? 'monthly_limit' : 'accounts.monthly_limit';
  return refusal(
    429,
    LIMIT_ERROR_CODE,
    'logs_plan',
    `${planText(plan)}; ${whose} ${count(Math.max(0, left.left))} credits left before spillover (${field}) and no other node can take it; ask for a smaller range`,
  );
}

/** The key's budget does not hold the plan. */
export function planOverBudget(
  plan: PlanFacts,
  key: string,
  left: number,
  budget: number,
): KeyRefusal {
  return refusal(
    429,
    LIMIT_ERROR_CODE,
    'budget',
    `${planText(plan)}; key '${key}' has ${count(Math.max(0, left))} of its ${count(budget)} credits left (keys.monthly_credits); ask for a smaller range`,
  );
}
