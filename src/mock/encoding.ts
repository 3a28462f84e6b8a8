/**
 * The few encodings mock answers need: base58 (Solana keys, hashes, signatures), deterministic
 * pseudo-random bytes from a seed, and a small seeded PRNG.
 */
import { createHash } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Map([...ALPHABET].map((char, i) => [char, i]));

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

/** Bytes of a base58 string, or undefined when it has a character outside the alphabet. */
export function base58Decode(text: string): Uint8Array | undefined {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const bytes: number[] = [];
  for (let i = zeros; i < text.length; i++) {
    let carry = INDEX.get(text[i]!);
    if (carry === undefined) return undefined;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  for (let i = 0; i < bytes.length; i++) out[zeros + i] = bytes[bytes.length - 1 - i]!;
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
