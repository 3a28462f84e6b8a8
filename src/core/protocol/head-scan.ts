/**
 * Byte scans that read chain heads out of answers (issue 26) — never a JSON.parse of an answer:
 * answers are far larger than requests, and the request path reads them only where a head can
 * be (the method says which scan applies, chain/method-heads.ts).
 *
 * Each scan looks for a member name spelled as nodes write it (`"slot"`, `"result"`, …) and
 * reads the integer or `0x` quantity that follows the colon. A name inside a string value is
 * always escaped (`\"slot\"`), so a plain indexOf cannot land in a string. Anything unexpected
 * answers -1 (no head): a missed head costs nothing, a wrong one would move routing.
 */
import { WASM_TEXT_BYTES, scanContextSlot } from './answer-scan.js';
import { quotedName, skipSpace, spelledAt } from './json-lexer.js';
import { arrayElementSpans, memberValueSpan, trimmedSpan } from './json-spans.js';

const QUOTE = 0x22;
const COLON = 0x3a;
const CLOSE_BRACE = 0x7d;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_X = 0x78;
/** 2^53: larger readings are not heads. */
const MAX_DIGITS = 15;
/** Hex digits of Number.MAX_SAFE_INTEGER (0x1fffffffffffff); more are never a block. */
const SAFE_HEX_DIGITS = 14;
/** The Solana envelope's context comes first in `result`, within this many bytes. */
const CONTEXT_WINDOW = 256;
/**
 * Up to this many bytes a search for one name walks them in JS (nameAt); beyond, a native
 * Buffer.indexOf wins: V8 walks a Buffer at ~20 instructions a byte, and the native call
 * costs ~1,500 before it reads one.
 */
const JS_SEARCH_BYTES = 96;

const CONTEXT = quotedName('context');
const SLOT = quotedName('slot');
const RESULT = quotedName('result');
const NUMBER = quotedName('number');
const BLOCK_NUMBER = quotedName('blockNumber');
const ABSOLUTE_SLOT = quotedName('absoluteSlot');
const CONTEXT_SLOT = quotedName('contextSlot');
const SLOTS_BEHIND = quotedName('numSlotsBehind');
const MIN_CONTEXT_SLOT = quotedName('minContextSlot');
const NULL_RESULT = Buffer.from('"result":null', 'latin1');
const PROCESSED = quotedName('processed');
const CONFIRMED = quotedName('confirmed');

function hexValue(c: number): number {
  if (c >= ZERO && c <= NINE) return c - ZERO;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * A JSON integer, or a `"0x…"` quantity string (`0X` and leading zeros read as nodes read them,
 * protocol/quantity.ts), starting at `i`: its value, or -1 (also past Number.MAX_SAFE_INTEGER).
 */
export function numberAt(bytes: Uint8Array, i: number, end: number): number {
  let c = bytes[i];
  if (c === QUOTE) {
    if (bytes[i + 1] !== ZERO || (bytes[i + 2]! | 0x20) !== LOWER_X) return -1;
    let value = 0;
    // Significant digits (after any leading zeros), and whether any digit came at all.
    let digits = 0;
    let any = false;
    for (let k = i + 3; k < end; k++) {
      c = bytes[k]!;
      if (c === QUOTE) return !any || value > Number.MAX_SAFE_INTEGER ? -1 : value;
      const digit = hexValue(c);
      if (digit < 0) return -1;
      any = true;
      if (digits === 0 && digit === 0) continue;
      if (++digits > SAFE_HEX_DIGITS) return -1;
      value = value * 16 + digit;
    }
    return -1;
  }
  let value = 0;
  let k = i;
  for (; k < end; k++) {
    c = bytes[k]!;
    if (c < ZERO || c > NINE) break;
    value = value * 10 + (c - ZERO);
  }
  const digits = k - i;
  if (digits === 0 || digits > MAX_DIGITS) return -1;
  // `.5` or `e3` after the digits: not an integer.
  if (c === 0x2e || c === 0x65 || c === 0x45) return -1;
  return value;
}

/** The number after the member name `name` found at or after `from` (before `end`), or -1. */
function numberAfter(bytes: Buffer, name: Buffer, from: number, end: number): number {
  const at =
    end - from <= JS_SEARCH_BYTES ? nameAt(bytes, name, from, end) : bytes.indexOf(name, from);
  if (at === -1 || at >= end) return -1;
  return numberAfterName(bytes, at + name.length, end);
}

/** The number after `:` that follows a member name ending just before `i`, or -1. */
export function numberAfterName(bytes: Buffer, i: number, end: number): number {
  i = skipSpace(bytes, i, end);
  if (bytes[i] !== COLON) return -1;
  i = skipSpace(bytes, i + 1, end);
  return numberAt(bytes, i, end);
}

/**
 * Where `name` first starts at an index in [from, end) (it may run past `end`), or -1: a JS
 * walk, cheaper than a native indexOf over the few bytes it looks at (json-lexer spelledAt).
 */
function nameAt(bytes: Uint8Array, name: Uint8Array, from: number, end: number): number {
  const first = name[0];
  const last = Math.min(end, bytes.length - name.length + 1);
  for (let i = from; i < last; i++) {
    if (bytes[i] === first && spelledAt(bytes, name, i)) return i;
  }
  return -1;
}

/** Horspool's shifts for `name`: how far a window may move, by the byte under its last one. */
function horspoolShifts(name: Uint8Array): Uint8Array {
  const shifts = new Uint8Array(256).fill(name.length);
  for (let j = 0; j < name.length - 1; j++) shifts[name[j]!] = name.length - 1 - j;
  return shifts;
}

const CONTEXT_SHIFTS = horspoolShifts(CONTEXT);

/**
 * Where `"context"` first starts in [0, end) (it may run past `end`), or -1. Horspool's search
 * looks at about one byte in five of JSON text before the envelope.
 */
function contextAt(bytes: Uint8Array, end: number): number {
  const last = CONTEXT.length - 1;
  const limit = Math.min(end, bytes.length - last);
  for (let i = 0; i < limit;) {
    const c = bytes[i + last]!;
    if (c === QUOTE && spelledAt(bytes, CONTEXT, i)) return i;
    i += CONTEXT_SHIFTS[c]!;
  }
  return -1;
}

/**
 * Solana's `{"context":{…,"slot":N},"value":…}` envelope: N, or -1. The envelope's `"context"`
 * starts within CONTEXT_WINDOW bytes and `"slot"` comes before its first `}`: a search of those
 * few bytes and a walk to that `}`, never a search of the whole (possibly huge) answer.
 */
export function contextSlotOf(body: Buffer): number {
  if (body.length > WASM_TEXT_BYTES) return largeContextSlotOf(body);
  // The same search, walk and number in WebAssembly (answer-scan.wat).
  return scanContextSlot(body);
}

/** contextSlotOf for an answer too large for the WebAssembly scan's memory, walked in JS. */
export function largeContextSlotOf(body: Buffer): number {
  const at = contextAt(body, Math.min(body.length, CONTEXT_WINDOW));
  if (at === -1) return -1;
  const n = body.length;
  let slot = -1;
  let i = at + CONTEXT.length;
  for (; i < n; i++) {
    const c = body[i];
    if (c === CLOSE_BRACE) break;
    if (c === QUOTE && slot === -1 && spelledAt(body, SLOT, i)) slot = i;
  }
  // No `}` at all: not an envelope.
  if (slot === -1 || i === n) return -1;
  return numberAfterName(body, slot + SLOT.length, i);
}

/** `"result":N` or `"result":"0x…"`: the number, or -1. */
export function resultNumberOf(body: Buffer): number {
  return numberAfter(body, RESULT, 0, body.length);
}

/** The first `"name":N` after `"result"` (a block's `number`, getEpochInfo's `absoluteSlot`). */
function resultMemberOf(body: Buffer, name: Buffer): number {
  const at = body.indexOf(RESULT);
  if (at === -1) return -1;
  return numberAfter(body, name, at + RESULT.length, body.length);
}

export const blockNumberOfResult = (body: Buffer): number => resultMemberOf(body, NUMBER);
export const absoluteSlotOf = (body: Buffer): number => resultMemberOf(body, ABSOLUTE_SLOT);

/** The highest `"blockNumber"` in an answer (logs come in block order: the last is the highest). */
export function lastBlockNumberOf(body: Buffer): number {
  const at = body.lastIndexOf(BLOCK_NUMBER);
  if (at === -1) return -1;
  return numberAfterName(body, at + BLOCK_NUMBER.length, body.length);
}

/** Whether the answer is `"result":null` (spelled compactly, as nodes do). */
export function isNullResult(body: Buffer): boolean {
  return body.indexOf(NULL_RESULT) !== -1;
}

/** A -32016 error's `data.contextSlot`, or -1. */
export const errorContextSlotOf = (body: Buffer): number =>
  numberAfter(body, CONTEXT_SLOT, 0, body.length);

/** A -32005 error's `data.numSlotsBehind`, or -1. */
export const slotsBehindOf = (body: Buffer): number =>
  numberAfter(body, SLOTS_BEHIND, 0, body.length);

/** A Solana request's `minContextSlot`, or -1. */
export const minContextSlotOf = (body: Buffer): number =>
  numberAfter(body, MIN_CONTEXT_SLOT, 0, body.length);

/**
 * A Solana request's commitment: 0 processed, 1 confirmed, 2 finalized (the RPC default).
 * `"confirmed"` anywhere wins over `"processed"` anywhere. (The request path reads it with
 * request-ask.ts, in the walk its method scan takes anyway.)
 */
export function commitmentOf(body: Buffer): 0 | 1 | 2 {
  if (body.indexOf(CONFIRMED) !== -1) return 1;
  return body.indexOf(PROCESSED) !== -1 ? 0 : 2;
}

/** A block parameter: a number ≥ 0, or one of these tags. */
export const BlockTag = {
  unknown: -1,
  latest: -2,
  safe: -3,
  finalized: -4,
  /** `pending`, `earliest`, a block hash object: nothing to judge against a head. */
  other: -5,
} as const;

const TAGS: ReadonlyMap<string, number> = new Map([
  ['"latest"', BlockTag.latest],
  ['"safe"', BlockTag.safe],
  ['"finalized"', BlockTag.finalized],
]);

/**
 * The request's block parameter at `index` of `params` (EVM): a number, a BlockTag, or
 * BlockTag.latest when the parameter is left out (the EVM default). Requests are small, and
 * this runs only when a node is known to be behind or an answer says a block is missing.
 */
export function blockParamOf(body: Buffer, index: number): number {
  const params = memberValueSpan(body, trimmedSpan(body), 'params');
  if (params === null) return BlockTag.latest;
  if (params === undefined) return BlockTag.unknown;
  const elements = arrayElementSpans(body.subarray(params.start, params.end));
  if (elements === undefined) return BlockTag.unknown;
  const element = elements[index];
  if (element === undefined) return BlockTag.latest;
  const start = params.start + element.start;
  const end = params.start + element.end;
  const number = numberAt(body, start, end);
  if (number >= 0) return number;
  return TAGS.get(body.toString('latin1', start, end)) ?? BlockTag.other;
}

/** `"name":N` anywhere in `bytes` (a notification's result), or -1. */
export function memberNumberOf(bytes: Buffer, name: string): number {
  return numberAfter(bytes, quotedName(name), 0, bytes.length);
}

/**
 * The `toBlock` of an `eth_getLogs` filter (`params[0]`): its number, BlockTag.latest when it
 * is absent or `latest`, BlockTag.other for a `blockHash` filter or another tag, unknown when
 * the request cannot be read. Run only where a node is judged (lag-gate.ts), never per answer.
 */
export function logsToBlockOf(body: Buffer): number {
  const params = memberValueSpan(body, trimmedSpan(body), 'params');
  if (params === null || params === undefined) return BlockTag.unknown;
  const elements = arrayElementSpans(body.subarray(params.start, params.end));
  const first = elements?.[0];
  if (first === undefined) return BlockTag.unknown;
  const filter = { start: params.start + first.start, end: params.start + first.end };
  if (memberValueSpan(body, filter, 'blockHash')) return BlockTag.other;
  const to = memberValueSpan(body, filter, 'toBlock');
  if (to === undefined) return BlockTag.unknown;
  if (to === null) return BlockTag.latest;
  const number = numberAt(body, to.start, to.end);
  if (number >= 0) return number;
  return TAGS.get(body.toString('latin1', to.start, to.end)) ?? BlockTag.other;
}
