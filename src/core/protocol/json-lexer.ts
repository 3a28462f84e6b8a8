/**
 * The byte-level JSON tokens the JS scanners of the request path share (method-scan,
 * json-spans, head-scan and node/result-first): whitespace, strings, numbers and literals.
 * (jsonShape's validation is WebAssembly: answer-scan.wat.)
 *
 * Each skip function takes the index where its token starts and an `end` it never reads past,
 * and returns the index just after the token, or INVALID. Strings come in two strengths,
 * because the scanners trust their input to different degrees:
 * - skipTrustedString is for text already validated: it finds the closing quote with the
 *   native indexOf, so long values (base64 account data) cost little;
 * - skipPlainString accepts only strings without escapes (a cheap look that gives up early).
 * Bytes ≥ 0x80 are not decoded anywhere: inside a string any sequence is fine to JSON.parse
 * (the UTF-8 decoder never swallows an ASCII byte), and outside one they are invalid anyway.
 */

/**
 * Returned by the skip functions when no valid token ends before `end`. Scanners copy it into
 * a module-level `const` of their own (`const INVALID = NO_TOKEN`): V8 folds a module's own
 * constants into optimized code but reads an imported or exported binding from memory on every
 * use, and in these per-byte loops that cost up to a fifth of the speed (measured on jsonShape
 * and memberValueSpan). For the same reason the byte constants below stay private and each
 * scanner keeps the few it compares against.
 */
export const INVALID = -1;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const MINUS = 0x2d;
const BACKSLASH = 0x5c;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const UPPER_E = 0x45;
const LOWER_E = 0x65;

const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const TRUE = ascii('true');
const FALSE = ascii('false');
const NULL = ascii('null');

/** Byte classes as lookup tables: one load instead of a chain of comparisons. */
/** Bytes that end a run of plain string content: quote, backslash and raw controls. */
const STRING_STOP = byteSet('"\\');
STRING_STOP.fill(1, 0, SPACE);

function byteSet(chars: string): Uint8Array {
  const set = new Uint8Array(256);
  for (const byte of ascii(chars)) set[byte] = 1;
  return set;
}

/**
 * Whether the bytes of `name` are spelled at `i` (false when they would run past the end).
 * For the scanners that look for a member name or value over a few hundred bytes in JS: there
 * a native Buffer.indexOf costs more in its call (binding, argument checks, searcher set-up)
 * than the walk itself.
 */
export function spelledAt(bytes: Uint8Array, name: Uint8Array, i: number): boolean {
  if (i + name.length > bytes.length) return false;
  for (let k = 0; k < name.length; k++) if (bytes[i + k] !== name[k]) return false;
  return true;
}

/** Whether `byte` is JSON whitespace (space, tab, LF, CR); false for undefined. */
export function isJsonSpace(byte: number | undefined): boolean {
  return byte === SPACE || byte === LF || byte === CR || byte === TAB;
}

/** The first index at or after `i` (and below `end`) that is not JSON whitespace. */
export function skipSpace(bytes: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = bytes[i]!;
    if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

/**
 * For text already validated: index just past the closing quote of the string opening at
 * `quote`, or INVALID when none comes before `end`. Never throws on invalid input.
 */
export function skipTrustedString(bytes: Uint8Array, quote: number, end: number): number {
  let from = quote + 1;
  for (;;) {
    // indexOf runs natively, so long string values (base64 account data) cost little.
    const close = bytes.indexOf(QUOTE, from);
    if (close === -1 || close >= end) return INVALID;
    // Inside a valid string, backslashes only start escapes or are the second half of `\\`,
    // so a quote is escaped exactly when an odd run of backslashes precedes it.
    let run = 0;
    while (bytes[close - 1 - run] === BACKSLASH) run++;
    if (run % 2 === 0) return close + 1;
    from = close + 1;
  }
}

/**
 * A valid JSON string without escapes opening at `quote`: index just past its closing quote,
 * or INVALID at a backslash or raw control character, or when no quote comes before `end`.
 */
export function skipPlainString(bytes: Uint8Array, quote: number, end: number): number {
  for (let i = quote + 1; i < end; i++) {
    const c = bytes[i]!;
    if (STRING_STOP[c] === 1) return c === QUOTE ? i + 1 : INVALID;
  }
  return INVALID;
}

/**
 * The number, `true`, `false` or `null` starting at `i`: index just past it, or INVALID when
 * none starts there. Whether a valid token follows is the caller's concern.
 */
export function skipBareScalar(bytes: Uint8Array, i: number, end: number): number {
  if (i >= end) return INVALID;
  const c = bytes[i]!;
  if (c === MINUS || (c >= ZERO && c <= NINE)) return skipNumber(bytes, i, end);
  if (c === TRUE[0]) return skipLiteral(bytes, i, end, TRUE);
  if (c === FALSE[0]) return skipLiteral(bytes, i, end, FALSE);
  if (c === NULL[0]) return skipLiteral(bytes, i, end, NULL);
  return INVALID;
}

/** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` at `i`: index just past it, or INVALID. */
export function skipNumber(bytes: Uint8Array, i: number, end: number): number {
  if (bytes[i] === MINUS) i++;
  if (i >= end) return INVALID;
  const c = bytes[i]!;
  if (c === ZERO) i++;
  else if (c > ZERO && c <= NINE) i = digitsEnd(bytes, i + 1, end);
  else return INVALID;
  if (i < end && bytes[i] === DOT) {
    const from = i + 1;
    i = digitsEnd(bytes, from, end);
    if (i === from) return INVALID;
  }
  if (i < end && (bytes[i] === LOWER_E || bytes[i] === UPPER_E)) {
    i++;
    if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) i++;
    const from = i;
    i = digitsEnd(bytes, from, end);
    if (i === from) return INVALID;
  }
  return i;
}

function digitsEnd(bytes: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = bytes[i]!;
    if (c < ZERO || c > NINE) break;
    i++;
  }
  return i;
}

function skipLiteral(bytes: Uint8Array, i: number, end: number, word: Uint8Array): number {
  if (i + word.length > end) return INVALID;
  for (let k = 1; k < word.length; k++) if (bytes[i + k] !== word[k]) return INVALID;
  return i + word.length;
}

/** `name` as the bytes of a JSON member name, quotes included (`"slot"`), for byte searches. */
export function quotedName(name: string): Buffer {
  return Buffer.from(`"${name}"`, 'latin1');
}
