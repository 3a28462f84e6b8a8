/**
 * The request path's first look at a small body, in WebAssembly (request-scan.wat): one call
 * answers what the JavaScript path asked in four steps — `isUtf8` (a native call), the leading
 * method scan, a latin1 copy of the body and a regular-expression search of it for a repeated
 * method key and the head ask's tokens — about 3,400 instructions for a 141-byte getBalance. The
 * copy into the scanner's memory is one memmove, the walk goes sixteen bytes a step, and the
 * method's string is cut only when the name differs from the last one found (a connection, a
 * client, a benchmark mostly repeats a few methods).
 *
 * It reads exactly what method-scan.ts scanMethod (with request-ask.ts) reads, for bodies that
 * are all ASCII (the head ask as solanaAskOf reads it, see scanRequest); anything else (a non-ASCII byte anywhere, a body over REQUEST_SCAN_BYTES) is
 * left to that path, which stays the reference: the property test holds the two together.
 */
import { numberAfterName } from './head-scan.js';
import { latin1Span } from './latin1-text.js';
import { packAsk } from './request-ask.js';
import { REQUEST_SCAN_WASM } from './request-scan-wasm.js';
import { instantiateOptimized } from './wasm-instance.js';

/** Bodies up to this many bytes are scanned here; longer ones take the JavaScript scan. */
export const REQUEST_SCAN_BYTES = 4096;

interface Scanner {
  readonly memory: { readonly buffer: ArrayBuffer };
  scan(this: void, length: number): number;
  sameName(this: void, from: number, length: number): number;
}

const scanner = instantiateOptimized(REQUEST_SCAN_WASM) as Scanner;
/** The memory never grows, so these views stay valid. */
const bodyArea = new Uint8Array(scanner.memory.buffer, 0, REQUEST_SCAN_BYTES);
/** Word 1088 (byte 4352): where the first `"minContextSlot"` token starts. */
const words = new Int32Array(scanner.memory.buffer, 0, 1089);
const MIN_AT_WORD = 1088;
const { scan, sameName } = scanner;

// The packed answer of `scan` (request-scan.wat).
const CLOSE_MASK = 0xfff;
const LENGTH_SHIFT = 12;
const LENGTH_MASK = 0xff;
const CONFIRMED = 0x100000;
const PROCESSED = 0x200000;
const MIN_CONTEXT_SLOT = 0x400000;
const SAME_NAME = 0x800000;
const NOT_LEADING = 0x1000000;
/** `"minContextSlot"`'s length: where its `:` may follow. */
const MIN_CONTEXT_SLOT_LENGTH = '"minContextSlot"'.length;

/** The name the scanner keeps as the last one found, as a string (the two change together). */
let lastName = '';

/**
 * What the last scan that answered found: module state, read right after `scanRequest`, so a
 * scan allocates nothing. `method` is the same string object while the name repeats.
 */
export const requestScan: { method: string; headAsk: number | undefined } = {
  method: '',
  headAsk: undefined,
};

/** scanRequest found nothing it is sure of: the caller parses. */
export const SCAN_UNSURE = 0;
/** scanRequest read a leading method: `requestScan` holds it and the head ask. */
export const SCAN_METHOD = 1;
/**
 * scanRequest read an all-ASCII object whose first member is not `"method"` (`"jsonrpc"` and
 * `"id"` come first from most clients): `requestScan.headAsk` holds the ask of the whole body;
 * the method is for a validator to find (answer-scan.ts methodMemberOf), then `nameAt`.
 */
export const SCAN_ASK_ONLY = 2;

/**
 * What the scan is sure of in `body` (at most REQUEST_SCAN_BYTES): SCAN_METHOD for an all-ASCII
 * body with a leading `"method"` member, a plain name and no second method key or `\u` escape
 * after it; SCAN_ASK_ONLY for an all-ASCII object with another member first; else SCAN_UNSURE.
 * The head ask (request-ask.ts, packed) is read from the whole body whatever its size: the
 * walk covers it anyway. (The JavaScript scan leaves it undefined when more than 160 bytes
 * follow the name, and read-heads.ts then reads it with solanaAskOf, a second walk; a token
 * the ask looks for cannot stand before the name, so the two agree.)
 */
export function scanRequest(body: Buffer): number {
  bodyArea.set(body);
  const found = scan(body.length);
  if (found < 0) return SCAN_UNSURE;
  const commitment = (found & CONFIRMED) !== 0 ? 1 : (found & PROCESSED) !== 0 ? 0 : 2;
  const min =
    (found & MIN_CONTEXT_SLOT) === 0
      ? -1
      : numberAfterName(body, words[MIN_AT_WORD]! + MIN_CONTEXT_SLOT_LENGTH, body.length);
  requestScan.headAsk = packAsk(commitment, min);
  if ((found & NOT_LEADING) !== 0) return SCAN_ASK_ONLY;
  if ((found & SAME_NAME) === 0) {
    const close = found & CLOSE_MASK;
    // Only a changed name is cut from the body; the scanner now holds it as the last one.
    lastName = latin1Span(body, close - ((found >> LENGTH_SHIFT) & LENGTH_MASK), close);
  }
  requestScan.method = lastName;
  return SCAN_METHOD;
}

/** The longest name the scanner keeps (its area at 4096 holds 128 bytes). */
const KEPT_NAME_BYTES = 128;

/**
 * The name between the quotes at `open` and `close` in `body`, the body scanRequest last read:
 * the last name found (the same string) when it is the same, else cut from the body and, when
 * it fits the scanner's area, kept as the last one.
 */
export function nameAt(body: Buffer, open: number, close: number): string {
  const length = close - open - 1;
  if (length > KEPT_NAME_BYTES) return latin1Span(body, open + 1, close);
  if (sameName(open + 1, length) === 0) lastName = latin1Span(body, open + 1, close);
  return lastName;
}
