/**
 * The request path's cheap look at a JSON-RPC body: find the method name without parsing.
 *
 * Accepts exactly one shape: optional whitespace, `{`, optional whitespace, `"method"` as the
 * first key, `:`, and a plain string value (no backslash escapes, ASCII only, bounded length),
 * with no other `"method"` and no `\u` escape after it.
 * Anything else returns `undefined` and the caller falls back to `JSON.parse`, so correctness
 * comes from the slow path and the scan only has to be right about what it accepts.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const COLON = 0x3a;
/** Longest method name the scan accepts; longer names take the full-parse path. */
const MAX_SCANNED_NAME = 128;
const METHOD_KEY = Buffer.from('"method"', 'latin1');
const UNICODE_ESCAPE = Buffer.from('\\u', 'latin1');

function isJsonSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function skipSpace(body: Uint8Array, from: number): number {
  let i = from;
  while (isJsonSpace(body[i])) i++;
  return i;
}

/** The method name of a leading-`"method"` JSON-RPC object, or undefined when unsure. */
export function scanMethod(body: Buffer): string | undefined {
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(body, i + 1);
  if (body.length - i < METHOD_KEY.length) return undefined;
  for (let k = 0; k < METHOD_KEY.length; k++) {
    if (body[i + k] !== METHOD_KEY[k]) return undefined;
  }
  i = skipSpace(body, i + METHOD_KEY.length);
  if (body[i] !== COLON) return undefined;
  i = skipSpace(body, i + 1);
  if (body[i] !== QUOTE) return undefined;
  const start = i + 1;
  const limit = Math.min(body.length, start + MAX_SCANNED_NAME + 1);
  for (let j = start; j < limit; j++) {
    const byte = body[j]!;
    if (byte === QUOTE) {
      // A repeated `method` key (JSON.parse takes the last) must not let the scan price one
      // method while the upstream runs another: full parse if one may follow, plain or
      // `\u`-escaped (the only escape that can spell a letter of "method").
      if (body.indexOf(METHOD_KEY, j + 1) !== -1 || body.indexOf(UNICODE_ESCAPE, j + 1) !== -1) {
        return undefined;
      }
      return body.toString('latin1', start, j);
    }
    // Escapes and non-ASCII (which would need UTF-8 validation) go to the full parser;
    // control characters are invalid inside JSON strings.
    if (byte === BACKSLASH || byte >= 0x80 || byte < 0x20) return undefined;
  }
  return undefined;
}
