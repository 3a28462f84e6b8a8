/**
 * Block numbers as clients write them (issue 29): a JSON-RPC quantity is `0x` hex, but nodes
 * (geth, anvil, erigon) also read `0X`, upper-case digits and leading zeros, so a guard that
 * judged only the short lower-case spelling let every other one past it unchecked. One reader
 * for every place the request path judges a block number.
 */

/** A block past Number.MAX_SAFE_INTEGER: no chain has it, and a range to it fits no limit. */
export const HUGE_BLOCK = Number.POSITIVE_INFINITY;

const HEX = /^0[xX][0-9a-fA-F]+$/;
/** Significant hex digits of Number.MAX_SAFE_INTEGER (0x1fffffffffffff). */
const SAFE_DIGITS = 14;

/**
 * A hex quantity's value (`0x`/`0X`, any case, leading zeros read as the number they are):
 * HUGE_BLOCK above Number.MAX_SAFE_INTEGER, undefined for text that is not one (`0x`, `12`,
 * `0x1g`): such text goes on to the node, which answers it itself.
 */
export function hexQuantity(text: string): number | undefined {
  if (!HEX.test(text)) return undefined;
  let start = 2;
  while (start < text.length - 1 && text.charCodeAt(start) === 0x30) start++;
  if (text.length - start > SAFE_DIGITS) return HUGE_BLOCK;
  const value = Number.parseInt(text.slice(start), 16);
  return value > Number.MAX_SAFE_INTEGER ? HUGE_BLOCK : value;
}

/** A quantity that is a safe integer (≥ 0), or undefined (not a quantity, or huge). */
export function safeQuantity(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const n = hexQuantity(value);
  return n === HUGE_BLOCK ? undefined : n;
}
