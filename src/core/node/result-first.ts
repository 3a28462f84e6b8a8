/**
 * Decides from the first bytes of a JSON-RPC answer whether its first top-level member after
 * `jsonrpc`/`id` is `result`. Such an answer cannot carry a top-level `error`, so a large one
 * may be streamed to the client without buffering it for classification.
 */
import {
  INVALID as NO_TOKEN,
  skipBareScalar,
  skipPlainString,
  skipSpace,
} from '../protocol/json-lexer.js';

// Module-level copies, not imports: see INVALID in json-lexer.ts.
const INVALID = NO_TOKEN;
const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;

/** How far into the body the scan looks. */
const SCAN_LIMIT = 256;

/** True when `head` starts an object whose first member other than jsonrpc/id is `result`. */
export function isResultFirst(head: Buffer): boolean {
  const end = Math.min(head.length, SCAN_LIMIT);
  let i = skipSpace(head, 0, end);
  if (head[i] !== OPEN_BRACE) return false;
  i++;
  while (i < end) {
    i = skipSpace(head, i, end);
    if (head[i] !== QUOTE) return false;
    const nameEnd = skipPlainString(head, i, end);
    if (nameEnd === INVALID) return false;
    const key = head.toString('latin1', i + 1, nameEnd - 1);
    i = skipSpace(head, nameEnd, end);
    if (head[i] !== COLON) return false;
    i = skipSpace(head, i + 1, end);
    if (key === 'result') return true;
    if (key !== 'jsonrpc' && key !== 'id') return false;
    // jsonrpc and id hold a string without escapes, a number or null.
    i = head[i] === QUOTE ? skipPlainString(head, i, end) : skipBareScalar(head, i, end);
    if (i === INVALID) return false;
    i = skipSpace(head, i, end);
    if (head[i] !== COMMA) return false;
    i++;
  }
  return false;
}
