/**
 * The few encodings mock answers need: base58 (Solana keys, hashes, signatures), deterministic
 * pseudo-random bytes from a seed, and a small seeded PRNG.
 *
 * Only an encoder lives here, for answers the mock writes: decoding untrusted input is
 * @scure/base's job (core/protocol/transaction-id.ts). This encoder stays because answers
 * encode several keys each and it is 2–4× faster than @scure/base's generic radix conversion
 * (measured: 6 µs vs 27 µs per 32-byte key); encoding.test.ts pins it to @scure/base's output.
 */
import { createHash } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Bitcoin-alphabet base58 of `bytes`. */
export function base58Encode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j]! << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '1'.repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]!];
  return out;
}

/** `length` deterministic bytes derived from `seed` (SHA-256 in counter mode). */
export function seededBytes(seed: string, length = 32): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 32 < length; i++) {
    blocks.push(createHash('sha256').update(`${seed}#${i}`).digest());
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** A base58 32-byte value (public key, blockhash) derived from `seed`. */
export function base58Of(seed: string, length = 32): string {
  return base58Encode(seededBytes(seed, length));
}

/** `0x`-prefixed hex of `length` bytes derived from `seed`. */
export function hexOf(seed: string, length = 32): string {
  return `0x${seededBytes(seed, length).toString('hex')}`;
}

/** Lower-case `0x` hex quantity of a non-negative integer. */
export function toQuantity(value: number | bigint): string {
  return `0x${value.toString(16)}`;
}

/** Mulberry32: a tiny deterministic PRNG returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from a string (FNV-1a). */
export function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
