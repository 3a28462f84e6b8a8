/**
 * A Buffer's bytes as a one-byte string, one character a byte: what `toString('latin1')` ends
 * in, called directly. Buffer.prototype.latin1Slice is Node's own decoder (there since the
 * first Buffer, untyped in @types/node); skipping toString's encoding lookup matters to the
 * request path's scans, which copy each small body once to search it as text.
 */
interface Latin1Slicing {
  latin1Slice(start: number, end: number): string;
}

/** `bytes` as latin1 text (byte i is `text.charCodeAt(i)`). */
export function latin1Text(bytes: Buffer): string {
  return (bytes as unknown as Latin1Slicing).latin1Slice(0, bytes.length);
}

/** `bytes[start, end)` as latin1 text. */
export function latin1Span(bytes: Buffer, start: number, end: number): string {
  return (bytes as unknown as Latin1Slicing).latin1Slice(start, end);
}
