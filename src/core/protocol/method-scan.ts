/**
 * The request path's cheap look at a JSON-RPC body: find the method name without parsing.
 *
 * Accepts exactly one shape: optional whitespace, `{`, optional whitespace, `"method"` as the
 * first key, `:`, and a plain string value (no backslash escapes, ASCII only, bounded length),
 * with no other `"method"` and no `\u` escape after it.
 * Anything else returns `undefined` and the caller falls back to `JSON.parse`, so correctness
 * comes from the slow path and the scan only has to be right about what it accepts.
 */

import { INVALID as NO_TOKEN, skipPlainString, skipSpace, spelledAt } from './json-lexer.js';

// Module-level copies, not imports: see INVALID in json-lexer.ts.
const INVALID = NO_TOKEN;
const QUOTE = 0x22;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const BACKSLASH = 0x5c;
const LOWER_U = 0x75;
/** Rests of a body up to this size are checked in JS, longer ones with native searches. */
const JS_SCAN_BYTES = 384;

/** Longest method name the scan accepts; longer names take the full-parse path. */
const MAX_SCANNED_NAME = 128;
const METHOD_KEY = Buffer.from('"method"', 'latin1');
const UNICODE_ESCAPE = Buffer.from('\\u', 'latin1');

/** The method name of a leading-`"method"` JSON-RPC object, or undefined when unsure. */
export function scanMethod(body: Buffer): string | undefined {
  const n = body.length;
  let i = skipSpace(body, 0, n);
  if (body[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(body, i + 1, n);
  if (n - i < METHOD_KEY.length) return undefined;
  for (let k = 0; k < METHOD_KEY.length; k++) {
    if (body[i + k] !== METHOD_KEY[k]) return undefined;
  }
  i = skipSpace(body, i + METHOD_KEY.length, n);
  if (body[i] !== COLON) return undefined;
  i = skipSpace(body, i + 1, n);
  if (body[i] !== QUOTE) return undefined;
  const end = skipPlainString(body, i, Math.min(n, i + MAX_SCANNED_NAME + 2));
  if (end === INVALID) return undefined;
  const start = i + 1;
  const close = end - 1;
  // Escapes and non-ASCII (which would need UTF-8 validation) go to the full parser.
  for (let j = start; j < close; j++) if (body[j]! >= 0x80) return undefined;
  // A repeated `method` key (JSON.parse takes the last) must not let the scan price one
  // method while the upstream runs another: full parse if one may follow, plain or
  // `\u`-escaped (the only escape that can spell a letter of "method").
  if (mayRepeatMethod(body, end)) return undefined;
  return body.toString('latin1', start, close);
}

/** Whether a `"method"` or a `\u` escape appears at or after `from`. */
function mayRepeatMethod(body: Buffer, from: number): boolean {
  const n = body.length;
  if (n - from > JS_SCAN_BYTES) {
    return body.indexOf(METHOD_KEY, from) !== -1 || body.indexOf(UNICODE_ESCAPE, from) !== -1;
  }
  // One walk of a small request's rest instead of two native calls (json-lexer spelledAt).
  for (let i = from; i < n; i++) {
    const c = body[i];
    if (c === QUOTE && spelledAt(body, METHOD_KEY, i)) return true;
    if (c === BACKSLASH && body[i + 1] === LOWER_U) return true;
  }
  return false;
}
