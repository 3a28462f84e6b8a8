/**
 * Byte spans into JSON text that has already been validated, so batches can be cut and ids
 * swapped without a parse/stringify round trip.
 *
 * Re-serialising a parsed value rounds integers beyond 2^53 (lamports, supplies, client ids)
 * and respells numbers (`1.0` → `1`, `1e400` → `null`); cutting the client's and the upstream's
 * own bytes keeps every value exactly as it was written.
 *
 * The scanner only tracks where strings and top-level elements/members begin and end: nested
 * containers are skipped by counting brackets and braces outside strings (a counter, not
 * recursion, so any nesting depth is fine). It trusts its input to be valid JSON; on invalid
 * input it still terminates and never throws, returning `undefined` where it notices a problem
 * and otherwise spans that carry no meaning.
 */

import { INVALID as NO_TOKEN, isJsonSpace, skipSpace, skipTrustedString } from './json-lexer.js';

// Module-level copies, not imports: see INVALID in json-lexer.ts.
const INVALID = NO_TOKEN;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** [start, end) byte offsets into the buffer. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** Bytes that end a bare scalar (number, `true`, `false`, `null`). */
function endsScalar(byte: number | undefined): boolean {
  return (
    isJsonSpace(byte) ||
    byte === COMMA ||
    byte === CLOSE_BRACKET ||
    byte === CLOSE_BRACE ||
    byte === COLON
  );
}

/** The byte at `i`, or undefined past `end`, so a scan never reads beyond its span. */
function peek(bytes: Uint8Array, i: number, end: number): number | undefined {
  return i < end ? bytes[i] : undefined;
}

/** Index just past the array or object opening at `open`, or INVALID. */
function skipContainer(bytes: Uint8Array, open: number, end: number): number {
  let depth = 0;
  let i = open;
  while (i < end) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = skipTrustedString(bytes, i, end);
      if (i === INVALID) return INVALID;
      continue;
    }
    // Valid JSON nests brackets and braces properly, so one counter serves both kinds.
    if (byte === OPEN_BRACKET || byte === OPEN_BRACE) depth++;
    else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return INVALID;
}

/**
 * Index just past the value starting at `start` (already past whitespace), or INVALID.
 * Returns `start` itself when no value starts there (e.g. at a `,`), which callers reject.
 */
function skipValue(bytes: Uint8Array, start: number, end: number): number {
  const byte = peek(bytes, start, end);
  if (byte === QUOTE) return skipTrustedString(bytes, start, end);
  if (byte === OPEN_BRACKET || byte === OPEN_BRACE) return skipContainer(bytes, start, end);
  let i = start;
  while (i < end && !endsScalar(bytes[i])) i++;
  return i;
}

/** The end of a value starting at `start`, or undefined when none starts there or it runs off. */
function valueEnd(bytes: Uint8Array, start: number, end: number): number | undefined {
  const after = skipValue(bytes, start, end);
  return after === INVALID || after === start ? undefined : after;
}

/** Only whitespace left from `from` to `end`: the container closed where the text ends. */
function onlySpaceUntil(bytes: Uint8Array, from: number, end: number): boolean {
  return skipSpace(bytes, from, end) === end;
}

/** The span of a whole text without the JSON whitespace around it. */
export function trimmedSpan(bytes: Uint8Array): Span {
  const start = skipSpace(bytes, 0, bytes.length);
  let end = bytes.length;
  while (end > start && isJsonSpace(bytes[end - 1])) end--;
  return { start, end };
}

/** Spans of the top-level elements of a JSON array text, in order (whitespace around each element excluded); undefined when the text's top-level value is not an array. */
export function arrayElementSpans(bytes: Uint8Array): Span[] | undefined {
  const end = bytes.length;
  let i = skipSpace(bytes, 0, end);
  if (bytes[i] !== OPEN_BRACKET) return undefined;
  const spans: Span[] = [];
  i = skipSpace(bytes, i + 1, end);
  if (bytes[i] === CLOSE_BRACKET) return onlySpaceUntil(bytes, i + 1, end) ? spans : undefined;
  for (;;) {
    const elementEnd = valueEnd(bytes, i, end);
    if (elementEnd === undefined) return undefined;
    spans.push({ start: i, end: elementEnd });
    i = skipSpace(bytes, elementEnd, end);
    const separator = bytes[i];
    if (separator === CLOSE_BRACKET) return onlySpaceUntil(bytes, i + 1, end) ? spans : undefined;
    if (separator !== COMMA) return undefined;
    i = skipSpace(bytes, i + 1, end);
  }
}

/**
 * Whether the member name between `nameStart` and `nameEnd` (quotes excluded) is `key`, or
 * undefined when it holds an escape: `\u0069d` spells `id`, and decoding escapes here is not
 * worth it for names no real client writes.
 */
function nameIs(
  bytes: Uint8Array,
  nameStart: number,
  nameEnd: number,
  key: string,
): boolean | undefined {
  // Every byte is looked at even after a mismatch: an escape anywhere makes the answer unsure.
  let same = nameEnd - nameStart === key.length;
  for (let i = nameStart; i < nameEnd; i++) {
    const byte = bytes[i];
    if (byte === BACKSLASH) return undefined;
    if (same && byte !== key.charCodeAt(i - nameStart)) same = false;
  }
  return same;
}

/**
 * For an object text at `span` (a top-level element span from above, or the whole text): the span of the VALUE of its top-level member named `key`
 * (when it appears exactly once), `null` when the object has no such member,
 * or `undefined` when the scan can't decide safely: the span is not an object, the name repeats, or some top-level member name contains a backslash escape (it might spell `key`).
 * `key` is plain ASCII without escapes.
 */
export function memberValueSpan(
  bytes: Uint8Array,
  span: Span,
  key: string,
): Span | null | undefined {
  // Clamped so a span reaching past the buffer cannot make a scalar scan run on forever.
  const end = Math.min(span.end, bytes.length);
  let i = skipSpace(bytes, Math.max(span.start, 0), end);
  if (peek(bytes, i, end) !== OPEN_BRACE) return undefined;
  i = skipSpace(bytes, i + 1, end);
  if (peek(bytes, i, end) === CLOSE_BRACE)
    return onlySpaceUntil(bytes, i + 1, end) ? null : undefined;
  // Plain numbers until the end, so the scan allocates only the Span it returns.
  let foundStart = -1;
  let foundEnd = -1;
  for (;;) {
    if (peek(bytes, i, end) !== QUOTE) return undefined;
    const nameEnd = skipTrustedString(bytes, i, end);
    if (nameEnd === INVALID) return undefined;
    const matches = nameIs(bytes, i + 1, nameEnd - 1, key);
    if (matches === undefined) return undefined;
    i = skipSpace(bytes, nameEnd, end);
    if (peek(bytes, i, end) !== COLON) return undefined;
    const valueStart = skipSpace(bytes, i + 1, end);
    const valueStop = valueEnd(bytes, valueStart, end);
    if (valueStop === undefined) return undefined;
    if (matches) {
      // A repeated name: JSON.parse keeps the last, but splicing one of them would leave the
      // other in the bytes (and strict parsers refuse the pair). Let the caller re-serialise.
      if (foundStart !== -1) return undefined;
      foundStart = valueStart;
      foundEnd = valueStop;
    }
    i = skipSpace(bytes, valueStop, end);
    const separator = peek(bytes, i, end);
    if (separator === CLOSE_BRACE) {
      if (!onlySpaceUntil(bytes, i + 1, end)) return undefined;
      return foundStart === -1 ? null : { start: foundStart, end: foundEnd };
    }
    if (separator !== COMMA) return undefined;
    i = skipSpace(bytes, i + 1, end);
  }
}

/**
 * `bytes[span]` with `inner` (a sub-span inside it) replaced by `replacement` text (UTF-8), as a Buffer.
 * Throws a RangeError when `inner` is not inside `span` or `span` not inside `bytes`: that is a
 * caller bug, and a silently wrong body would be worse.
 */
export function spliceSpan(
  bytes: Uint8Array,
  span: Span,
  inner: Span,
  replacement: string,
): Buffer {
  if (
    !(0 <= span.start && span.start <= inner.start && inner.start <= inner.end) ||
    !(inner.end <= span.end && span.end <= bytes.length)
  ) {
    throw new RangeError(
      `spliceSpan: [${inner.start}, ${inner.end}) is not inside [${span.start}, ${span.end}) of ${bytes.length} bytes`,
    );
  }
  const head = inner.start - span.start;
  const middle = Buffer.byteLength(replacement, 'utf8');
  const out = Buffer.allocUnsafe(head + middle + (span.end - inner.end));
  out.set(bytes.subarray(span.start, inner.start), 0);
  out.write(replacement, head, 'utf8');
  out.set(bytes.subarray(inner.end, span.end), head + middle);
  return out;
}
