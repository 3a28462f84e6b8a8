/**
 * Whose fault a JSON-RPC error answer is, from its code and message (docs/routing.md, "Whose
 * fault"). One table for every client cascade fronts — geth, erigon, nethermind, besu, reth,
 * hardhat/anvil (EVM) and agave (Solana) — read top to bottom, first match wins:
 *
 * - `request`: any healthy node would answer the same (a revert, a failed simulation, a bad
 *   nonce, a bad signature). Relayed to the client as it came; no retry, no penalty.
 * - `node_state`: this node lacks the data right now (behind the head, pruned, a slot it never
 *   stored). Another node may have it: retry elsewhere, no penalty — the node serves other
 *   requests fine, and taking it out of rotation for one request's data would hurt everyone.
 * - `node_unhealthy`: the node says it is unhealthy or behind. Retry elsewhere and penalize.
 * - `rate_limited`: the provider throttles us. Retry elsewhere and penalize.
 * - `unknown`: nothing known; settled by agreement (a second node giving the same error makes
 *   it the request's).
 *
 * Codes alone are ambiguous across chains (besu's -32004 is "upfront cost exceeds balance",
 * agave's is "block not available"), so rules match the message wherever clients share codes.
 */
import type { ErrorFault, ErrorRule } from './error-rule.js';
import { NODE_ERROR_RULES } from './node-error-rules.js';
import { REQUEST_ERROR_RULES } from './request-error-rules.js';

export type { ErrorFault, ErrorRule } from './error-rule.js';

/** The table, in match order: throttling and node state first, then the request's faults. */
export const ERROR_RULES: readonly ErrorRule[] = [...NODE_ERROR_RULES, ...REQUEST_ERROR_RULES];

/** The first rule matching `code` and `message`, or undefined. */
export function matchErrorRule(code: number, message: string): ErrorRule | undefined {
  for (const rule of ERROR_RULES) {
    if (rule.codes !== undefined && !rule.codes.includes(code)) continue;
    if (rule.message !== undefined && !rule.message.test(message)) continue;
    return rule;
  }
  return undefined;
}

/** Whose fault an error with `code` and `message` is (`unknown` when no rule matches). */
export function errorFault(code: number, message: string): ErrorFault {
  return matchErrorRule(code, message)?.fault ?? 'unknown';
}
