/**
 * What a Solana request asks of a node's head (issue 26): its commitment — `"confirmed"`
 * anywhere in the body wins over `"processed"` anywhere, else finalized (commitmentOf) — and
 * its `minContextSlot` (minContextSlotOf). Packed into one number kept on the request, so the
 * lag checks of admission and of settling read the bytes once per request, not once per check.
 *
 * A small request is read by the search its method scan runs anyway (scanRequestRest, called
 * by method-scan.ts): one regular-expression search of the body's latin1 text answers the
 * scan's own question (does a second `"method"` key or a `\u` escape follow?) and these. V8
 * walks a Buffer in JS at ~20 instructions a byte (every element load re-checks the buffer),
 * and a native Buffer.indexOf costs ~800 before it reads one; irregexp's compiled search reads
 * a one-byte string at a few instructions a character, so one latin1 copy plus one search
 * (~1,900 instructions for a 140-byte getBalance) beats both. Large bodies keep the native
 * searches. (An all-ASCII body up to 4 KiB is read by request-scan.wat instead, which finds
 * the same tokens in one WebAssembly pass; this search is the reference it is tested against.)
 */
import { commitmentOf, minContextSlotOf, numberAfterName } from './head-scan.js';
import { latin1Text } from './latin1-text.js';

/** Bodies up to this size are searched as text for their ask (beyond: native searches). */
const ASK_TEXT_BYTES = 256;

/**
 * Every token the ask and the method scan look for, at any offset: `"method"`, `"confirmed"`,
 * `"processed"` and `"minContextSlot"` (each a quote, the name, then a quote that is left
 * unread, so a token may start where another ends), and a `\u` escape. Its `lastIndex` is
 * set before each search; searches never interleave.
 */
const ASK_TOKENS = /"(?:method|confirmed|processed|minContextSlot)(?=")|\\u/g;
/** `"minContextSlot"`'s length: where its `:` may follow. */
const MIN_CONTEXT_SLOT_LENGTH = '"minContextSlot"'.length;

/** scanRequestRest: another `"method"` key or a `\u` escape follows the method name. */
export const METHOD_REPEATS = -1;

/** A request's commitment (0 processed, 1 confirmed, 2 finalized) and minContextSlot, packed. */
export function packAsk(commitment: 0 | 1 | 2, minContextSlot: number): number {
  return (minContextSlot + 1) * 4 + commitment;
}

/** The commitment of a packed ask: 0 processed, 1 confirmed, 2 finalized. */
export function askCommitment(ask: number): 0 | 1 | 2 {
  return (ask % 4) as 0 | 1 | 2;
}

/** The minContextSlot of a packed ask; -1 when the request names none. */
export function askMinContextSlot(ask: number): number {
  return Math.floor(ask / 4) - 1;
}

/** What a request asks, packed: one text search of a small body, native searches of a large one. */
export function solanaAskOf(body: Buffer): number {
  if (body.length > ASK_TEXT_BYTES) return packAsk(commitmentOf(body), minContextSlotOf(body));
  return searchAsk(body, latin1Text(body), 0, 0, -1, -1);
}

/**
 * The method scan's search of a small request, `text` its latin1 text, from `from` (just past
 * the closing quote of its method name, `method`): METHOD_REPEATS when another `"method"` key
 * or a `\u` escape follows, else the packed ask of the whole body. Before `from` lie only `{`,
 * `"method"`, `:`, spaces and the name: an asked-for token there is the name itself, or starts
 * at its closing quote.
 */
export function scanRequestRest(body: Buffer, text: string, from: number, method: string): number {
  const nameQuote = from - 1;
  let seen = 0;
  let minAt = -1;
  if (method === 'confirmed') seen |= SEEN_CONFIRMED;
  else if (method === 'processed') seen |= SEEN_PROCESSED;
  else if (method === 'minContextSlot') minAt = nameQuote - method.length - 1;
  return searchAsk(body, text, nameQuote, seen, minAt, from);
}

/** searchAsk's findings so far, as bits of one small integer. */
const SEEN_CONFIRMED = 1;
const SEEN_PROCESSED = 2;

/**
 * Searches `text` (the latin1 text of `body`) from `from` for the ask's tokens. With
 * `methodFrom` ≥ 0 it is the method scan's search too: a `"method"` or `\u` at or after
 * `methodFrom` answers METHOD_REPEATS.
 */
function searchAsk(
  body: Buffer,
  text: string,
  from: number,
  seen: number,
  minAt: number,
  methodFrom: number,
): number {
  ASK_TOKENS.lastIndex = from;
  for (let found = ASK_TOKENS.exec(text); found !== null; found = ASK_TOKENS.exec(text)) {
    const at = found.index;
    // Token lengths without the closing quote: \u 2, "method 7, "confirmed / "processed 10,
    // "minContextSlot 15.
    const length = found[0].length;
    if (length === 2 || length === 7) {
      if (methodFrom >= 0 && at >= methodFrom) return METHOD_REPEATS;
    } else if (length === 15) {
      if (minAt === -1) minAt = at;
    } else if (text.charCodeAt(at + 1) === 0x63) {
      seen |= SEEN_CONFIRMED;
    } else {
      seen |= SEEN_PROCESSED;
    }
  }
  const min =
    minAt === -1 ? -1 : numberAfterName(body, minAt + MIN_CONTEXT_SLOT_LENGTH, body.length);
  const commitment = (seen & SEEN_CONFIRMED) !== 0 ? 1 : (seen & SEEN_PROCESSED) !== 0 ? 0 : 2;
  return packAsk(commitment, min);
}
