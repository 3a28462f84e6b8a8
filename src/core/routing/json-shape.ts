/**
 * Byte-level JSON check for small upstream answers.
 *
 * behaviour.md §4.7 has every small body (≤ 512 B) validated, so a node that answers garbage
 * or a JSON-RPC error is caught. Nearly all of those bodies are plain results, and decoding
 * plus parsing each one only to learn "valid object without `error`" costs more than the rest
 * of the hop. This scan answers that from the bytes in one pass without allocating, and says
 * `unsure` whenever the answer needs the parsed value (a top-level `error` member), so only
 * those bodies pay for `JSON.parse`.
 *
 * It accepts exactly what `JSON.parse(bytes.toString('utf8'))` accepts. Bytes ≥ 0x80 are legal
 * only inside strings, and there any sequence is fine: the UTF-8 decoder turns malformed input
 * into U+FFFD without ever swallowing an ASCII byte, so every quote and backslash sits where
 * the parser sees it.
 */

/** What the byte scan learned about a whole JSON text. */
export const JsonShape = {
  /** JSON.parse would throw. */
  invalid: 0,
  /** An object none of whose top-level member names is `error`. */
  object: 1,
  array: 2,
  /** A string, number, true, false or null. */
  scalar: 3,
  /**
   * Parse it to know: an object with a top-level `error` member or an escaped top-level name
   * (which may spell `error`), or nesting deeper than MAX_DEPTH.
   */
  unsure: 4,
} as const;
export type JsonShape = (typeof JsonShape)[keyof typeof JsonShape];

/**
 * Containers deeper than this make the scan give up with `unsure` (V8 parses any depth). A
 * text needs two bytes per level, so no text of up to 2 × MAX_DEPTH bytes can reach it.
 */
const MAX_DEPTH = 256;
/** The closing byte of each open container; module-level so a call allocates nothing. */
const closers = new Uint8Array(MAX_DEPTH);
/** Set by stringEnd: the string just scanned held a backslash escape. */
let escaped = false;
/** Set by memberValue: a top-level member name is, or may decode to, `error`. */
let errorName = false;

const INVALID = -1;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const LBRACKET = 0x5b;
const BACKSLASH = 0x5c;
const RBRACKET = 0x5d;
const LOWER_E = 0x65;
const LOWER_U = 0x75;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');
const ERROR = ascii('error');

/** Byte classes as lookup tables: one load instead of a chain of comparisons. */
const SIMPLE_ESCAPE = byteSet('"\\/bfnrt');
const HEX = byteSet('0123456789abcdefABCDEF');
/** Bytes that end a run of plain string content: quote, backslash and raw controls. */
const STRING_STOP = byteSet('"\\');
STRING_STOP.fill(1, 0, SPACE);

function byteSet(chars: string): Uint8Array {
  const set = new Uint8Array(256);
  for (const byte of ascii(chars)) set[byte] = 1;
  return set;
}

/** Whether `bytes` holds one JSON value, and which kind; see JsonShape. */
export function jsonShape(bytes: Uint8Array): JsonShape {
  const n = bytes.length;
  const start = skipWhitespace(bytes, 0, n);
  if (start === n) return JsonShape.invalid;
  const first = bytes[start];
  const shape =
    first === LBRACE ? JsonShape.object : first === LBRACKET ? JsonShape.array : JsonShape.scalar;
  errorName = false;
  let depth = 0;
  let i = start;
  // Each turn reads one value at i, then the commas and closers that follow it.
  for (;;) {
    i = skipWhitespace(bytes, i, n);
    if (i === n) return JsonShape.invalid;
    const c = bytes[i]!;
    if (c === LBRACE || c === LBRACKET) {
      // Each open container still needs its closer in the bytes left.
      if (depth + 1 > n - i - 1) return JsonShape.invalid;
      if (depth === MAX_DEPTH) return JsonShape.unsure;
      const closer = c === LBRACE ? RBRACE : RBRACKET;
      closers[depth++] = closer;
      i = skipWhitespace(bytes, i + 1, n);
      if (i < n && bytes[i] === closer) {
        depth--;
        i++;
      } else {
        if (c === LBRACE) i = memberValue(bytes, i, n, depth === 1);
        if (i === INVALID) return JsonShape.invalid;
        continue;
      }
    } else {
      i = scalarEnd(bytes, i, n, c);
      if (i === INVALID) return JsonShape.invalid;
    }
    for (;;) {
      i = skipWhitespace(bytes, i, n);
      if (depth === 0) return i !== n ? JsonShape.invalid : errorName ? JsonShape.unsure : shape;
      if (i === n) return JsonShape.invalid;
      const closer = closers[depth - 1]!;
      const d = bytes[i]!;
      if (d === closer) {
        depth--;
        i++;
        continue;
      }
      if (d !== COMMA) return JsonShape.invalid;
      i = closer === RBRACE ? memberValue(bytes, i + 1, n, depth === 1) : i + 1;
      if (i === INVALID) return JsonShape.invalid;
      break;
    }
  }
}

function skipWhitespace(bytes: Uint8Array, i: number, n: number): number {
  while (i < n) {
    const c = bytes[i]!;
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

/**
 * Reads `"name" :` at i (after optional whitespace); returns where the member's value may
 * start. A top-level name that is `error`, or has an escape that might spell it, sets errorName.
 */
function memberValue(bytes: Uint8Array, i: number, n: number, topLevel: boolean): number {
  i = skipWhitespace(bytes, i, n);
  if (i === n || bytes[i] !== QUOTE) return INVALID;
  const end = stringEnd(bytes, i + 1, n);
  if (end === INVALID) return INVALID;
  if (topLevel && (escaped || isError(bytes, i + 1, end - 1))) errorName = true;
  i = skipWhitespace(bytes, end, n);
  if (i === n || bytes[i] !== COLON) return INVALID;
  return i + 1;
}

function isError(bytes: Uint8Array, from: number, to: number): boolean {
  if (to - from !== ERROR.length) return false;
  for (let k = 0; k < ERROR.length; k++) if (bytes[from + k] !== ERROR[k]) return false;
  return true;
}

/** End of the string, number or literal whose first byte `c` is at i. */
function scalarEnd(bytes: Uint8Array, i: number, n: number, c: number): number {
  if (c === QUOTE) return stringEnd(bytes, i + 1, n);
  if (c === MINUS || (c >= ZERO && c <= NINE)) return numberEnd(bytes, i, n);
  if (c === TRUE[0]) return literalEnd(bytes, i, n, TRUE);
  if (c === FALSE[0]) return literalEnd(bytes, i, n, FALSE);
  if (c === NULL[0]) return literalEnd(bytes, i, n, NULL);
  return INVALID;
}

/** i is just past the opening quote; returns the index just past the closing one. */
function stringEnd(bytes: Uint8Array, i: number, n: number): number {
  escaped = false;
  while (i < n) {
    const c = bytes[i]!;
    if (STRING_STOP[c] === 0) {
      i++;
    } else if (c === QUOTE) {
      return i + 1;
    } else if (c === BACKSLASH) {
      escaped = true;
      i = escapeEnd(bytes, i + 1, n);
      if (i === INVALID) return INVALID;
    } else {
      return INVALID;
    }
  }
  return INVALID;
}

/** i is just past a backslash. */
function escapeEnd(bytes: Uint8Array, i: number, n: number): number {
  if (i === n) return INVALID;
  const c = bytes[i]!;
  if (c !== LOWER_U) return SIMPLE_ESCAPE[c] === 1 ? i + 1 : INVALID;
  if (i + 4 >= n) return INVALID;
  for (let k = 1; k <= 4; k++) if (HEX[bytes[i + k]!] !== 1) return INVALID;
  return i + 5;
}

/** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`; what follows is the caller's concern. */
function numberEnd(bytes: Uint8Array, i: number, n: number): number {
  if (bytes[i] === MINUS) i++;
  if (i === n) return INVALID;
  const c = bytes[i]!;
  if (c === ZERO) i++;
  else if (c > ZERO && c <= NINE) i = digitsEnd(bytes, i + 1, n);
  else return INVALID;
  if (i < n && bytes[i] === DOT) {
    const from = i + 1;
    i = digitsEnd(bytes, from, n);
    if (i === from) return INVALID;
  }
  if (i < n && (bytes[i] === LOWER_E || bytes[i] === UPPER_E)) {
    i++;
    if (i < n && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
    const from = i;
    i = digitsEnd(bytes, from, n);
    if (i === from) return INVALID;
  }
  return i;
}

function digitsEnd(bytes: Uint8Array, i: number, n: number): number {
  while (i < n) {
    const c = bytes[i]!;
    if (c < ZERO || c > NINE) break;
    i++;
  }
  return i;
}

function literalEnd(bytes: Uint8Array, i: number, n: number, word: Uint8Array): number {
  if (i + word.length > n) return INVALID;
  for (let k = 1; k < word.length; k++) if (bytes[i + k] !== word[k]) return INVALID;
  return i + word.length;
}
