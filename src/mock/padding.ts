/**
 * Oversized results for `responseBytes`: a method's realistic padded result, built once per
 * (method, size) and kept as bytes, plus JSON whitespace to top any result up to the size.
 */
import type { MethodContext, MethodSpec } from './method-spec.js';

/** Distinct (method, size) results kept; each can be tens of MB. */
const MAX_CACHED = 8;
const cache = new Map<string, Buffer>();
let spaces = Buffer.alloc(0);

/** The padded result of `method` for a target of `bytes`, from the cache when built before. */
export function paddedResult(
  method: string,
  spec: MethodSpec,
  bytes: number,
  params: unknown,
  ctx: MethodContext,
): Buffer | undefined {
  if (!spec.padded) return undefined;
  const key = `${method}\u0000${bytes}`;
  let built = cache.get(key);
  if (!built) {
    built = Buffer.from(spec.padded(bytes, params, ctx), 'utf8');
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(key, built);
  }
  return built;
}

/** `count` JSON whitespace bytes (a view of one shared buffer; never copied). */
export function whitespace(count: number): Buffer {
  if (count <= 0) return spaces.subarray(0, 0);
  if (spaces.length < count) spaces = Buffer.alloc(Math.max(count, spaces.length * 2), 0x20);
  return spaces.subarray(0, count);
}
