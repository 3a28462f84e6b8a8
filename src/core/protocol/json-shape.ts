/**
 * Byte-level JSON check for small upstream answers.
 *
 * docs/routing.md §3 has every small body (≤ 512 B) validated, so a node that answers garbage
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

import {
  INVALID as NO_TOKEN,
  skipBareScalar,
  skipSpace,
  skipString,
  stringEscaped,
} from './json-lexer.js';

// Module-level copies, not imports: see INVALID in json-lexer.ts.
const INVALID = NO_TOKEN;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

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
/** Set by memberValue: a top-level member name is, or may decode to, `error`. */
let errorName = false;

const ERROR = Uint8Array.from('error', (c) => c.charCodeAt(0));

/** Whether `bytes` holds one JSON value, and which kind; see JsonShape. */
export function jsonShape(bytes: Uint8Array): JsonShape {
  const n = bytes.length;
  const start = skipSpace(bytes, 0, n);
  if (start === n) return JsonShape.invalid;
  const first = bytes[start];
  const shape =
    first === OPEN_BRACE
      ? JsonShape.object
      : first === OPEN_BRACKET
        ? JsonShape.array
        : JsonShape.scalar;
  errorName = false;
  let depth = 0;
  let i = start;
  // Each turn reads one value at i, then the commas and closers that follow it.
  for (;;) {
    i = skipSpace(bytes, i, n);
    if (i === n) return JsonShape.invalid;
    const c = bytes[i]!;
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      // Each open container still needs its closer in the bytes left.
      if (depth + 1 > n - i - 1) return JsonShape.invalid;
      if (depth === MAX_DEPTH) return JsonShape.unsure;
      const closer = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
      closers[depth++] = closer;
      i = skipSpace(bytes, i + 1, n);
      if (i < n && bytes[i] === closer) {
        depth--;
        i++;
      } else {
        if (c === OPEN_BRACE) i = memberValue(bytes, i, n, depth === 1);
        if (i === INVALID) return JsonShape.invalid;
        continue;
      }
    } else {
      i = c === QUOTE ? skipString(bytes, i, n) : skipBareScalar(bytes, i, n);
      if (i === INVALID) return JsonShape.invalid;
    }
    for (;;) {
      i = skipSpace(bytes, i, n);
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
      i = closer === CLOSE_BRACE ? memberValue(bytes, i + 1, n, depth === 1) : i + 1;
      if (i === INVALID) return JsonShape.invalid;
      break;
    }
  }
}

/**
 * Reads `"name" :` at i (after optional whitespace); returns where the member's value may
 * start. A top-level name that is `error`, or has an escape that might spell it, sets errorName.
 */
function memberValue(bytes: Uint8Array, i: number, n: number, topLevel: boolean): number {
  i = skipSpace(bytes, i, n);
  if (i === n || bytes[i] !== QUOTE) return INVALID;
  const end = skipString(bytes, i, n);
  if (end === INVALID) return INVALID;
  if (topLevel && (stringEscaped || isError(bytes, i + 1, end - 1))) errorName = true;
  i = skipSpace(bytes, end, n);
  if (i === n || bytes[i] !== COLON) return INVALID;
  return i + 1;
}

function isError(bytes: Uint8Array, from: number, to: number): boolean {
  if (to - from !== ERROR.length) return false;
  for (let k = 0; k < ERROR.length; k++) if (bytes[from + k] !== ERROR[k]) return false;
  return true;
}
