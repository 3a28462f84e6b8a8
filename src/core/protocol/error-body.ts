/** JSON-RPC error codes cascade itself answers with. */
export const RPC_ERROR = {
  parseError: -32700,
  invalidRequest: -32600,
  serverError: -32000,
} as const;

/** The exact messages CascadeRPC uses, kept so existing alerts and clients keep matching. */
export const ERROR_MESSAGE = {
  parseError: 'Parse error',
  invalidRequest: 'Invalid Request',
  allFailed: 'All nodes failed with server/network errors (no rate limits to wait for)',
  globalTimeout: 'Global timeout exceeded while retrying nodes',
} as const;

/**
 * A write a node may have received without confirming it, and no node confirmed: cascade does
 * not claim it failed (it may have landed), nor resend what it cannot identify.
 */
export const WRITE_UNCONFIRMED_MESSAGE =
  'Write not confirmed: a node that received it did not answer and no node confirmed it, so it may have taken effect; check before sending it again';

/** A JSON-RPC 2.0 error object as JSON text (`idJson` is already JSON: `1`, `"a"`, `null`). */
export function errorJson(code: number, message: string, idJson: string): string {
  return `{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}},"id":${idJson}}`;
}

/** Same as errorJson, as bytes ready to write. */
export function errorBody(code: number, message: string, idJson: string): Buffer {
  return Buffer.from(errorJson(code, message, idJson), 'utf8');
}
