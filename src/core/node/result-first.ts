/**
 * Decides from the first bytes of a JSON-RPC answer whether its first top-level member after
 * `jsonrpc`/`id` is `result`. Such an answer cannot carry a top-level `error`, so a large one
 * may be streamed to the client without buffering it for classification.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** How far into the body the scan looks. */
const SCAN_LIMIT = 256;

function skipSpace(bytes: Buffer, from: number): number {
  let i = from;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) break;
    i++;
  }
  return i;
}

/** Index just past a plain string starting at `from` (a quote), or -1. */
function skipString(bytes: Buffer, from: number): number {
  if (bytes[from] !== QUOTE) return -1;
  for (let i = from + 1; i < bytes.length && i < SCAN_LIMIT; i++) {
    if (bytes[i] === BACKSLASH) return -1;
    if (bytes[i] === QUOTE) return i + 1;
  }
  return -1;
}

/** Index just past a simple scalar (string, number, null) starting at `from`, or -1. */
function skipScalar(bytes: Buffer, from: number): number {
  if (bytes[from] === QUOTE) return skipString(bytes, from);
  let i = from;
  while (
    i < bytes.length &&
    i < SCAN_LIMIT &&
    /[-+.0-9a-zA-Z]/.test(String.fromCharCode(bytes[i]!))
  )
    i++;
  return i > from ? i : -1;
}

/** True when `head` starts an object whose first member other than jsonrpc/id is `result`. */
export function isResultFirst(head: Buffer): boolean {
  let i = skipSpace(head, 0);
  if (head[i] !== 0x7b) return false;
  i++;
  while (i < SCAN_LIMIT) {
    i = skipSpace(head, i);
    const end = skipString(head, i);
    if (end === -1) return false;
    const key = head.toString('latin1', i + 1, end - 1);
    i = skipSpace(head, end);
    if (head[i] !== 0x3a) return false;
    i = skipSpace(head, i + 1);
    if (key === 'result') return true;
    if (key !== 'jsonrpc' && key !== 'id') return false;
    i = skipScalar(head, i);
    if (i === -1) return false;
    i = skipSpace(head, i);
    if (head[i] !== 0x2c) return false;
    i++;
  }
  return false;
}
