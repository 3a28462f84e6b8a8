/**
 * JSON check for upstream answers.
 *
 * docs/routing.md §3 has every small body (≤ 512 B) validated, so a node that answers garbage
 * or a JSON-RPC error is caught. Nearly all of those bodies are plain results, and decoding
 * plus parsing each one only to learn "valid object without `error`" costs more than the rest
 * of the hop. A byte scan answers that in one pass without allocating, and says `unsure`
 * whenever the answer needs the parsed value (a top-level `error` member), so only those
 * bodies pay for `JSON.parse`.
 *
 * The scan is WebAssembly (answer-scan.ts). A body larger than its memory's text area (only a
 * batch element can be) is parsed instead.
 *
 * It accepts exactly what `JSON.parse(bytes.toString('utf8'))` accepts. Bytes ≥ 0x80 are legal
 * only inside strings, and there any sequence is fine: the UTF-8 decoder turns malformed input
 * into U+FFFD without ever swallowing an ASCII byte, so every quote and backslash sits where
 * the parser sees it.
 */
import { WASM_TEXT_BYTES, scanShape } from './answer-scan.js';

/** What the scan learned about a whole JSON text. */
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
   * (which may spell `error`), or nesting deeper than 256 levels.
   */
  unsure: 4,
} as const;
export type JsonShape = (typeof JsonShape)[keyof typeof JsonShape];

/** Whether `bytes` holds one JSON value, and which kind; see JsonShape. */
export function jsonShape(bytes: Uint8Array): JsonShape {
  if (bytes.length > WASM_TEXT_BYTES) return parsedShape(bytes);
  return scanShape(bytes) as JsonShape;
}

/** The verdict from JSON.parse itself, for a text too large for the scan's memory. */
function parsedShape(bytes: Uint8Array): JsonShape {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8'));
  } catch {
    return JsonShape.invalid;
  }
  if (Array.isArray(value)) return JsonShape.array;
  if (typeof value !== 'object' || value === null) return JsonShape.scalar;
  return Object.hasOwn(value, 'error') ? JsonShape.unsure : JsonShape.object;
}
