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
 * A write whose node may have received it but did not answer: cascade does not send it to
 * another node (it could land twice), and does not claim it failed.
 */
export const WRITE_UNCONFIRMED_MESSAGE =
  'Write not confirmed: the node that received it did not answer, and cascade does not resend a write it cannot identify (it could land twice); check whether it took effect before sending it again';

/** A JSON-RPC 2.0 error object as JSON text (`idJson` is already JSON: `1`, `"a"`, `null`). */
export function errorJson(code: number, message: string, idJson: string): string {
  return `{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}},"id":${idJson}}`;
}

/** Same as errorJson, as bytes ready to write. */
export function errorBody(code: number, message: string, idJson: string): Buffer {
  return Buffer.from(errorJson(code, message, idJson), 'utf8');
}
