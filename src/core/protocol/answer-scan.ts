/**
 * The WebAssembly scans of a small upstream answer (answer-scan.wat): jsonShape's validation
 * and the search for the Solana envelope's slot. V8 runs a JS loop over a Buffer at ~35
 * instructions a byte on these scans (every element load re-checks the typed array); in wasm
 * the same walk costs a few a byte, strings go sixteen bytes a step, and the copy of the
 * answer into the scanner's memory is one memmove. Texts longer than WASM_TEXT_BYTES (only a
 * batch element, or an answer past the validation threshold) take the callers' other path.
 */
import { ANSWER_SCAN_WASM } from './answer-scan-wasm.js';
import { instantiateOptimized } from './wasm-instance.js';

/**
 * The scanner's text area: its memory's one page less the 256 bytes at the top where the
 * shape scan keeps the open containers.
 */
export const WASM_TEXT_BYTES = 65_536 - 256;

interface Scanner {
  readonly memory: { readonly buffer: ArrayBuffer };
  shape(this: void, length: number): number;
  contextSlot(this: void, length: number): number;
  methodName(this: void): number;
}

const scanner = instantiateOptimized(ANSWER_SCAN_WASM) as Scanner;
/** The memory never grows, so this view stays valid. */
const text = new Uint8Array(scanner.memory.buffer, 0, WASM_TEXT_BYTES);
const { shape, contextSlot, methodName } = scanner;

/**
 * The bytes now in the text area. A Solana answer is shape-checked and then has its slot read
 * (classify, then read-heads) from one copy: an answer's bytes are never written to after they
 * arrive, so the same Buffer object holds the same bytes. The shape scan always copies. (A
 * request body passes through the shape scan too, methodMemberOf; it is never written to either,
 * and never asked for a slot: the next answer is copied afresh.)
 */
let loaded: Uint8Array | undefined;

/** jsonShape's verdict for `bytes` (at most WASM_TEXT_BYTES of them); see JsonShape. */
export function scanShape(bytes: Uint8Array): number {
  text.set(bytes);
  loaded = bytes;
  return shape(bytes.length);
}

/**
 * In `bytes` (at most WASM_TEXT_BYTES), the slot of Solana's envelope as head-scan.ts
 * largeContextSlotOf reads it (the search, the walk to the context's `}` and the number), or
 * -1 when there is none.
 */
export function scanContextSlot(bytes: Uint8Array): number {
  if (bytes !== loaded) {
    text.set(bytes);
    loaded = bytes;
  }
  return contextSlot(bytes.length);
}

/** shape's verdict for a JSON object (JsonShape.object). */
const OBJECT = 1;
/** Where methodMemberOf packs the opening quote's index (the closing one's is below). */
const OPEN_SHIFT = 16;

/**
 * In `bytes` (an all-ASCII request body of at most REQUEST_SCAN_BYTES, as request-scan.ts
 * SCAN_ASK_ONLY vouches: the name is cut as latin1, and a quote's index fits 15 bits), the
 * quotes of the method name as JSON.parse would read it, when the validator is sure of it: the
 * body is a JSON object with no top-level `error` member, exactly one top-level `method` member
 * (its key written without escapes, none of which could spell another) and a string value
 * without escapes. Packed: the opening quote's index times 65536 plus the closing one's; -1 when
 * unsure (the caller parses).
 */
export function methodMemberOf(bytes: Uint8Array): number {
  if (scanShape(bytes) !== OBJECT) return -1;
  return methodName();
}

/** The opening quote's index in what methodMemberOf packed. */
export function packedOpen(packed: number): number {
  return packed >>> OPEN_SHIFT;
}
