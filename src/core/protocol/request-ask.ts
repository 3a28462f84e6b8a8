/**
 * What a Solana request asks of a node's head (issue 26): its commitment — `"confirmed"`
 * anywhere in the body wins over `"processed"` anywhere, else finalized (commitmentOf) — and
 * its `minContextSlot` (minContextSlotOf). Packed into one number kept on the request, so the
 * lag checks of admission and of settling read the bytes once per request, not once per check.
 *
 * A small request is read by the walk its method scan takes anyway (scanRequestRest, called
 * by method-scan.ts): one JS walk for the scan's own question (does a second `"method"` key
 * or a `\u` escape follow?) and for these. V8 walks a Buffer at ~20 instructions a byte, and a
 * native Buffer.indexOf costs ~1,500 before it reads one, so one walk of a small body beats the
 * native searches it replaces; larger bodies keep the native searches.
 */
import { commitmentOf, minContextSlotOf, numberAfterName } from './head-scan.js';
import { quotedName, spelledAt } from './json-lexer.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LOWER_C = 0x63;
const LOWER_M = 0x6d;
const LOWER_P = 0x70;
const LOWER_U = 0x75;

/** Bodies up to this size are walked in JS for their ask (beyond: three native searches). */
const ASK_WALK_BYTES = 256;

const METHOD_KEY = quotedName('method');
const CONFIRMED = quotedName('confirmed');
const PROCESSED = quotedName('processed');
const MIN_CONTEXT_SLOT = quotedName('minContextSlot');

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

/** What a request asks, packed: one JS walk of a small body, native searches of a large one. */
export function solanaAskOf(body: Buffer): number {
  if (body.length > ASK_WALK_BYTES) return packAsk(commitmentOf(body), minContextSlotOf(body));
  return walk(body, 0, false, false, -1);
}

/**
 * The method scan's walk of a small request from `from` (just past the closing quote of its
 * method name, `method`): METHOD_REPEATS when another `"method"` key or a `\u` escape follows,
 * else the packed ask of the whole body. Before `from` lie only `{`, `"method"`, `:`, spaces
 * and the name: an asked-for token there is the name itself, or starts at its closing quote.
 */
export function scanRequestRest(body: Buffer, from: number, method: string): number {
  const nameQuote = from - 1;
  const minAt =
    method === 'minContextSlot'
      ? nameQuote - method.length - 1
      : spelledAt(body, MIN_CONTEXT_SLOT, nameQuote)
        ? nameQuote
        : -1;
  const confirmed = method === 'confirmed' || spelledAt(body, CONFIRMED, nameQuote);
  const processed = method === 'processed' || spelledAt(body, PROCESSED, nameQuote);
  return walk(body, from, confirmed, processed, minAt, true);
}

function walk(
  body: Buffer,
  from: number,
  confirmed: boolean,
  processed: boolean,
  minAt: number,
  methodScan = false,
): number {
  const n = body.length;
  for (let i = from; i < n; i++) {
    const c = body[i];
    if (c === QUOTE) {
      const next = body[i + 1];
      if (next === LOWER_C) confirmed ||= spelledAt(body, CONFIRMED, i);
      else if (next === LOWER_P) processed ||= spelledAt(body, PROCESSED, i);
      else if (next === LOWER_M) {
        if (methodScan && spelledAt(body, METHOD_KEY, i)) return METHOD_REPEATS;
        if (minAt === -1 && spelledAt(body, MIN_CONTEXT_SLOT, i)) minAt = i;
      }
    } else if (c === BACKSLASH && methodScan && body[i + 1] === LOWER_U) {
      return METHOD_REPEATS;
    }
  }
  const min = minAt === -1 ? -1 : numberAfterName(body, minAt + MIN_CONTEXT_SLOT.length, n);
  return packAsk(confirmed ? 1 : processed ? 0 : 2, min);
}
