/**
 * A cheap look at a JSON-RPC body: find the method name without parsing. The request path
 * asks request-scan.ts (WebAssembly) first; this scan reads what that one does, and serves the
 * bodies it leaves (non-ASCII bytes, over 4 KiB) and the property tests that hold the two
 * together.
 *
 * Accepts exactly one shape: optional whitespace, `{`, optional whitespace, `"method"` as the
 * first key, `:`, and a plain string value (no backslash escapes, ASCII only, bounded length),
 * with no other `"method"` and no `\u` escape after it.
 * Anything else returns `undefined` and the caller falls back to `JSON.parse`, so correctness
 * comes from the slow path and the scan only has to be right about what it accepts.
 */

import { INVALID as NO_TOKEN, skipPlainString, skipSpace } from './json-lexer.js';
import { latin1Text } from './latin1-text.js';
import { METHOD_REPEATS, scanRequestRest } from './request-ask.js';

// Module-level copies, not imports: see INVALID in json-lexer.ts.
const INVALID = NO_TOKEN;
const QUOTE = 0x22;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;

/** Longest method name the scan accepts; longer names take the full-parse path. */
const MAX_SCANNED_NAME = 128;
const METHOD_KEY = Buffer.from('"method"', 'latin1');
const UNICODE_ESCAPE = Buffer.from('\\u', 'latin1');
/**
 * Rests of a body up to this size are searched once as latin1 text (which also reads the
 * request's head ask: request-ask.ts); longer ones get two native searches and no copy.
 */
const REST_SEARCH_BYTES = 160;

/**
 * What the last scan that found a method read of the request's head ask (request-ask.ts,
 * packed), or undefined when its body was too large to walk: module state, read by
 * parseRequest right after the scan, so the scan allocates nothing.
 */
export const scanned: { headAsk: number | undefined } = { headAsk: undefined };

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
  if (n - end > REST_SEARCH_BYTES) {
    if (body.indexOf(METHOD_KEY, end) !== -1 || body.indexOf(UNICODE_ESCAPE, end) !== -1) {
      return undefined;
    }
    scanned.headAsk = undefined;
    return body.toString('latin1', start, close);
  }
  // One search of a small request's text answers this and what it asks of heads.
  const text = latin1Text(body);
  const method = text.slice(start, close);
  const ask = scanRequestRest(body, text, end, method);
  if (ask === METHOD_REPEATS) return undefined;
  scanned.headAsk = ask;
  return method;
}
