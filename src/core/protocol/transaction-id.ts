/**
 * The identity a signed transaction carries from the client: an EVM transaction's hash and a
 * Solana transaction's first signature. Both are fixed before the transaction reaches any
 * node, so a node answering "already known" / "already processed" for a resubmission can be
 * answered with the same identifier the first acceptance would have returned.
 *
 * Solana wire format (what agave's `sendTransaction` deserialises): a compact-u16 count of
 * signatures, that many 64-byte signatures, then a legacy message or a versioned one (first
 * byte 0x80 | version; only v0 exists). Messages are walked to their end so random bytes that
 * happen to start like a transaction are refused; trailing bytes are allowed, as agave's
 * bincode options allow them.
 */
import { keccak_256 } from '@noble/hashes/sha3';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { base58, base64 } from '@scure/base';

/** Wire encodings `sendTransaction` accepts. */
export type SolanaWireEncoding = 'base58' | 'base64';

/** Largest wire transaction (agave PACKET_DATA_SIZE) and its encoded lengths (MAX_BASE58/64_SIZE). */
const PACKET_DATA_SIZE = 1232;
const MAX_ENCODED_LENGTH: Readonly<Record<SolanaWireEncoding, number>> = {
  base58: 1683,
  base64: 1644,
};
const SIGNATURE_BYTES = 64;
const KEY_BYTES = 32;
const VERSION_PREFIX = 0x80;
const HEX_BYTES = /^0[xX](?:[0-9a-fA-F]{2})+$/;

/** `0x`-prefixed lowercase keccak-256 of the raw transaction bytes; undefined for malformed hex. */
export function evmTransactionHash(rawHex: string): string | undefined {
  if (!HEX_BYTES.test(rawHex)) return undefined;
  return `0x${bytesToHex(keccak_256(hexToBytes(rawHex.slice(2))))}`;
}

/** A cursor over wire bytes; every read returns undefined past the end. */
class WireReader {
  #at = 0;
  constructor(readonly bytes: Uint8Array) {}

  byte(): number | undefined {
    return this.#at < this.bytes.length ? this.bytes[this.#at++] : undefined;
  }

  /** Solana's short_vec length: 1–3 bytes, 7 bits each, canonical, at most 0xffff. */
  compactU16(): number | undefined {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const byte = this.byte();
      if (byte === undefined) return undefined;
      value |= (byte & 0x7f) << (7 * i);
      if ((byte & 0x80) === 0) {
        // A zero continuation byte is an alias of a shorter encoding; agave refuses it.
        if (i > 0 && byte === 0) return undefined;
        return value <= 0xffff ? value : undefined;
      }
    }
    return undefined;
  }

  /** Skips `count` bytes; false when fewer are left. */
  skip(count: number): boolean {
    if (this.bytes.length - this.#at < count) return false;
    this.#at += count;
    return true;
  }

  /** A compact-u16 length followed by that many items of `size` bytes. */
  skipVector(size: number): boolean {
    const count = this.compactU16();
    return count !== undefined && this.skip(count * size);
  }

  get offset(): number {
    return this.#at;
  }
}

function isInstructionList(reader: WireReader): boolean {
  const count = reader.compactU16();
  if (count === undefined) return false;
  for (let i = 0; i < count; i++) {
    const programIndexed = reader.skip(1);
    if (!programIndexed || !reader.skipVector(1) || !reader.skipVector(1)) return false;
  }
  return true;
}

function isLookupList(reader: WireReader): boolean {
  const count = reader.compactU16();
  if (count === undefined) return false;
  for (let i = 0; i < count; i++) {
    if (!reader.skip(KEY_BYTES) || !reader.skipVector(1) || !reader.skipVector(1)) return false;
  }
  return true;
}

/** Walks a legacy or v0 message signed by `signatures` keys; false when it is malformed. */
function isMessage(reader: WireReader, signatures: number): boolean {
  const first = reader.bytes[reader.offset];
  const versioned = first !== undefined && (first & VERSION_PREFIX) !== 0;
  if (versioned && reader.byte() !== VERSION_PREFIX) return false; // only v0 exists
  const required = reader.byte();
  if (required !== signatures || !reader.skip(2)) return false;
  const keys = reader.compactU16();
  if (keys === undefined || keys < required || !reader.skip(keys * KEY_BYTES)) return false;
  if (!reader.skip(KEY_BYTES) || !isInstructionList(reader)) return false;
  return !versioned || isLookupList(reader);
}

function decodeWire(encoded: string, encoding: SolanaWireEncoding): Uint8Array | undefined {
  if (encoded.length > MAX_ENCODED_LENGTH[encoding]) return undefined;
  try {
    return encoding === 'base58' ? base58.decode(encoded) : base64.decode(encoded);
  } catch {
    return undefined;
  }
}

/**
 * The first signature of a wire transaction, base58 (what `sendTransaction` answers);
 * undefined when the text is not a well-formed legacy or v0 transaction.
 */
export function solanaTransactionSignature(
  encoded: string,
  encoding: SolanaWireEncoding,
): string | undefined {
  const bytes = decodeWire(encoded, encoding);
  if (bytes === undefined || bytes.length > PACKET_DATA_SIZE) return undefined;
  const reader = new WireReader(bytes);
  const count = reader.compactU16();
  if (count === undefined || count === 0) return undefined;
  const start = reader.offset;
  if (!reader.skip(count * SIGNATURE_BYTES) || !isMessage(reader, count)) return undefined;
  return base58.encode(bytes.subarray(start, start + SIGNATURE_BYTES));
}
