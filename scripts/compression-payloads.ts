/**
 * Big answers for the compression benchmark, shaped and filled like mainnet ones, because
 * gzip's ratio depends on the bytes: SPL token accounts (165-byte layout: a mint from a small
 * set of popular ones, a random owner, an amount, and the zeros of unset options), in base64
 * and jsonParsed; program accounts with random data (the worst case); and the mock nodes'
 * `responseBytes` padding, which repeats one account and so is the best case. Deterministic:
 * a seeded generator, so every run measures the same bytes.
 */
import { base58 } from '@scure/base';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_ACCOUNT_BYTES = 165;
const MINTS = 24;

/** xorshift32: fast, seeded, good enough to make bytes gzip cannot predict. */
class Bytes {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0 || 1;
  }

  #next(): number {
    let x = this.#state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#state = x >>> 0;
    return this.#state;
  }

  /** `length` random bytes. */
  take(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i += 4) {
      const word = this.#next();
      for (let j = 0; j < 4 && i + j < length; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
    }
    return out;
  }

  /** A whole number below `limit` (< 2^32). */
  below(limit: number): number {
    return this.#next() % limit;
  }
}

/** A result-first JSON-RPC answer of entries, grown to about `bytes`. */
function answerOf(bytes: number, entry: () => string): Buffer {
  const entries: string[] = [];
  let size = 0;
  while (size < bytes) {
    const text = entry();
    entries.push(text);
    size += text.length + 1;
  }
  return Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${entries.join(',')}]}`);
}

const accountJson = (data: string, space: number) =>
  `{"account":{"data":["${data}","base64"],"executable":false,"lamports":2039280,` +
  `"owner":"${TOKEN_PROGRAM}","rentEpoch":18446744073709551615,"space":${space}}`;

/** getProgramAccounts of the token program, base64: what a wallet indexer fetches. */
export function tokenAccountsBase64(bytes: number): Buffer {
  const random = new Bytes(1);
  const mints = Array.from({ length: MINTS }, () => random.take(32));
  return answerOf(bytes, () => {
    const data = Buffer.alloc(TOKEN_ACCOUNT_BYTES);
    mints[random.below(MINTS)]!.copy(data, 0);
    random.take(32).copy(data, 32);
    data.writeBigUInt64LE(BigInt(random.below(2 ** 30)) * BigInt(random.below(4096) + 1), 64);
    data[108] = 1; // state: initialized; delegate, is_native and close authority unset (zeros)
    const pubkey = base58.encode(random.take(32));
    return `${accountJson(data.toString('base64'), TOKEN_ACCOUNT_BYTES)},"pubkey":"${pubkey}"}`;
  });
}

/** getTokenAccountsByOwner, jsonParsed: what a wallet front-end fetches. */
export function tokenAccountsJsonParsed(bytes: number): Buffer {
  const random = new Bytes(2);
  const mints = Array.from({ length: MINTS }, () => base58.encode(random.take(32)));
  const owner = base58.encode(random.take(32));
  return answerOf(bytes, () => {
    const decimals = [0, 6, 9][random.below(3)]!;
    const amount = random.below(2 ** 31) * (random.below(1000) + 1);
    const ui = amount / 10 ** decimals;
    const info =
      `{"isNative":false,"mint":"${mints[random.below(MINTS)]}","owner":"${owner}","state":"initialized",` +
      `"tokenAmount":{"amount":"${amount}","decimals":${decimals},"uiAmount":${ui},"uiAmountString":"${ui}"}}`;
    const account =
      `{"data":{"parsed":{"info":${info},"type":"account"},"program":"spl-token","space":165},` +
      `"executable":false,"lamports":2039280,"owner":"${TOKEN_PROGRAM}","rentEpoch":18446744073709551615,"space":165}`;
    return `{"account":${account},"pubkey":"${base58.encode(random.take(32))}"}`;
  });
}

/** getProgramAccounts whose account data is random (hashes, signatures): the worst case. */
export function randomProgramAccounts(bytes: number): Buffer {
  const random = new Bytes(3);
  return answerOf(bytes, () => {
    const data = random.take(200).toString('base64');
    return `${accountJson(data, 200)},"pubkey":"${base58.encode(random.take(32))}"}`;
  });
}
