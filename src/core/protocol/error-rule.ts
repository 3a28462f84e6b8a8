/** The shape of one row of the upstream-error table (upstream-errors.ts) and its builder. */

/** Whose fault a JSON-RPC error is. */
export type ErrorFault = 'request' | 'node_state' | 'node_unhealthy' | 'rate_limited' | 'unknown';

/** One row of the table. */
export interface ErrorRule {
  /** Codes the row applies to; undefined = any code. */
  readonly codes?: readonly number[];
  /** Message pattern; undefined = any message. */
  readonly message?: RegExp;
  readonly fault: Exclude<ErrorFault, 'unknown'>;
  /** Which clients answer this (documentation and tests). */
  readonly clients: string;
  /** A real answer this row matches (tests run every example through the proxy). */
  readonly example: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** A row with one message pattern. */
export function row(
  fault: ErrorRule['fault'],
  clients: string,
  message: RegExp | undefined,
  example: ErrorRule['example'],
  codes?: readonly number[],
): ErrorRule {
  return { fault, clients, message, example, codes };
}
