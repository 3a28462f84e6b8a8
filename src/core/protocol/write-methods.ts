/**
 * Writes: methods that change chain state, so sending one twice may do it twice. cascade never
 * caches or coalesces them, and retries one on another node only when the first attempt surely
 * did not reach its node — or when the method is idempotent by construction: a signed
 * transaction's identity (EVM hash, Solana first signature) is fixed by the client, so every
 * node that receives it again answers about the same transaction (docs/routing.md §6).
 */
import { evmTransactionHash, solanaTransactionSignature } from './transaction-id.js';

/**
 * Writes cascade knows out of the box (`[routing] write_methods` replaces the list).
 * `simulateTransaction` is a read. `eth_sendTransaction` and `requestAirdrop` are signed or
 * funded by the node, `sendBundle` by a block engine: writes, but not idempotent.
 */
export const SHIPPED_WRITE_METHODS: readonly string[] = [
  'sendTransaction',
  'sendStakedTransaction',
  'sendBundle',
  'requestAirdrop',
  'eth_sendRawTransaction',
  'eth_sendTransaction',
];

/** Writes whose transaction identity cascade can compute from the request itself. */
const SIGNED_TRANSACTION_METHODS: Readonly<Record<string, 'evm' | 'solana'>> = {
  eth_sendRawTransaction: 'evm',
  sendTransaction: 'solana',
  sendStakedTransaction: 'solana',
};

/** True when cascade can compute `method`'s transaction identity (the write is idempotent). */
export function isSignedTransactionMethod(method: string): boolean {
  return Object.hasOwn(SIGNED_TRANSACTION_METHODS, method);
}

function paramsOf(body: Buffer): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const params = (parsed as { params?: unknown } | null)?.params;
    return Array.isArray(params) ? params : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The identity a signed transaction carries — the `0x` keccak-256 hash of an
 * `eth_sendRawTransaction`, the base58 first signature of a Solana `sendTransaction` — exactly
 * what a node answers on acceptance. Undefined for other methods and for malformed requests
 * (which nodes refuse anyway).
 */
export function transactionIdentity(method: string, body: Buffer): string | undefined {
  const chain = SIGNED_TRANSACTION_METHODS[method];
  if (chain === undefined || !Object.hasOwn(SIGNED_TRANSACTION_METHODS, method)) return undefined;
  const params = paramsOf(body);
  const wire = params?.[0];
  if (typeof wire !== 'string') return undefined;
  if (chain === 'evm') return evmTransactionHash(wire);
  const options = params![1];
  const encoding =
    typeof options === 'object' && options !== null
      ? (options as { encoding?: unknown }).encoding
      : undefined;
  if (encoding === undefined || encoding === 'base58' || encoding === 'base64') {
    return solanaTransactionSignature(wire, encoding ?? 'base58');
  }
  return undefined;
}
