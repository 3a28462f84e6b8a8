/**
 * Solana account objects as a real RPC node encodes them (base64 / base58 data tuples,
 * jsonParsed SPL token accounts), and the oversized lists `responseBytes` asks for.
 */
import { base58Encode, base58Of, seededBytes } from './encoding.js';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const USDC_MINT = 'EPjFWJd5Wt1tvgAUXhKuB1gd7aEyA2LvqfuC4Gy3pGUk';
/** u64::MAX, what current nodes report for rent-exempt accounts. */
const RENT_EPOCH = '18446744073709551615';
const TOKEN_ACCOUNT_BYTES = 165;
/** Bytes of account data per account in padded lists (a mid-sized program account). */
const PADDED_ACCOUNT_DATA = 1024;

/** The `context` object of a Solana "with context" answer. */
export function contextJson(slot: number): string {
  return `{"apiVersion":"2.1.21","slot":${slot}}`;
}

/** `{ context, value }` around an already-encoded value. */
export function withContext(slot: number, valueJson: string): string {
  return `{"context":${contextJson(slot)},"value":${valueJson}}`;
}

/** The `data` field for raw bytes in the requested encoding (base64 unless base58 asked). */
function dataJson(data: Uint8Array, encoding: unknown): string {
  if (encoding === 'base58') return `["${base58Encode(data)}","base58"]`;
  return `["${Buffer.from(data).toString('base64')}","base64"]`;
}

/** One account object. */
export function accountJson(
  data: Uint8Array,
  encoding: unknown,
  lamports: number,
  owner: string,
): string {
  return (
    `{"data":${dataJson(data, encoding)},"executable":false,"lamports":${lamports},` +
    `"owner":"${owner}","rentEpoch":${RENT_EPOCH},"space":${data.length}}`
  );
}

/** A funded system (wallet) account with no data. */
export function walletAccountJson(encoding: unknown): string {
  return accountJson(new Uint8Array(0), encoding, 2_500_000_000, SYSTEM_PROGRAM);
}

/** An SPL token account holding USDC for `owner`, raw or jsonParsed. */
export function tokenAccountJson(owner: string, encoding: unknown, amount: number): string {
  if (encoding !== 'jsonParsed') {
    return accountJson(
      seededBytes(`token:${owner}`, TOKEN_ACCOUNT_BYTES),
      encoding,
      2_039_280,
      TOKEN_PROGRAM,
    );
  }
  const ui = amount / 1e6;
  const info =
    `{"isNative":false,"mint":"${USDC_MINT}","owner":"${owner}","state":"initialized",` +
    `"tokenAmount":{"amount":"${amount}","decimals":6,"uiAmount":${ui},"uiAmountString":"${ui}"}}`;
  return (
    `{"data":{"parsed":{"info":${info},"type":"account"},"program":"spl-token","space":${TOKEN_ACCOUNT_BYTES}},` +
    `"executable":false,"lamports":2039280,"owner":"${TOKEN_PROGRAM}","rentEpoch":${RENT_EPOCH},` +
    `"space":${TOKEN_ACCOUNT_BYTES}}`
  );
}

/** `{pubkey, account}` entries of getProgramAccounts, natural size. */
export function programAccountsJson(program: string, encoding: unknown, count: number): string {
  const entries: string[] = [];
  for (let i = 0; i < count; i++) {
    const data = seededBytes(`${program}:${i}`, TOKEN_ACCOUNT_BYTES);
    const account = accountJson(data, encoding, 2_039_280, program);
    entries.push(`{"account":${account},"pubkey":"${base58Of(`${program}/${i}`)}"}`);
  }
  return `[${entries.join(',')}]`;
}

/** About `bytes` bytes of `{pubkey, account}` entries: many mid-sized accounts. */
export function paddedProgramAccountsJson(program: string, bytes: number): string {
  const data = seededBytes(`padded:${program}`, PADDED_ACCOUNT_DATA);
  const sample = `{"account":${accountJson(data, 'base64', 7_850_880, program)},"pubkey":"`;
  const perEntry = sample.length + 46;
  const count = Math.max(1, Math.round(bytes / perEntry));
  const entries = new Array<string>(count);
  for (let i = 0; i < count; i++) entries[i] = `${sample}${base58Of(`${program}/p${i}`)}"}`;
  return `[${entries.join(',')}]`;
}

/** One account whose data makes the JSON about `bytes` long (base64: base58 is for small data). */
export function paddedAccountJson(seed: string, bytes: number): string {
  const dataBytes = Math.max(0, Math.floor(((bytes - 200) * 3) / 4));
  return accountJson(bigData(seed, dataBytes), 'base64', 1_000_000_000, SYSTEM_PROGRAM);
}

/** `length` bytes built from a repeated 64-byte seed block (fast for megabytes). */
function bigData(seed: string, length: number): Uint8Array {
  const block = seededBytes(`big:${seed}`, 64);
  const out = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i += block.length) block.copy(out, i, 0, Math.min(64, length - i));
  return out;
}
