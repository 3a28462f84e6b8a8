/**
 * A body read in chunks, as both readers keep it (the proxy's request reader, http/read-body.ts,
 * and each attempt's answer reader, node/attempt-handler.ts): the first chunk in a field, the
 * rest in an array made only when a second arrives. Most bodies are one chunk, and a fresh array
 * with the backing store its first push grows costs ~180 bytes and a builtin call per body.
 */
import { Buffer } from 'node:buffer';

/** The body of a read that had no bytes (nothing can be written into it). */
const EMPTY = Buffer.alloc(0);

/** The whole body: `first` (if any) and `more` after it, `size` bytes in all. */
export function joinChunks(
  first: Buffer | undefined,
  more: readonly Buffer[] | undefined,
  size: number,
): Buffer {
  if (first === undefined) return EMPTY;
  if (more === undefined) return first;
  return Buffer.concat([first, ...more], size);
}
