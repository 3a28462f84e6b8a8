/** Reading json-spans results as text, for the json-spans tests. */
import {
  arrayElementSpans,
  memberValueSpan,
  type Span,
} from '../../src/core/protocol/json-spans.js';

/** A text as UTF-8 bytes. */
export const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

/** The text of `span` in `bytes`. */
export const cut = (bytes: Uint8Array, span: Span): string =>
  Buffer.from(bytes).toString('utf8', span.start, span.end);

/** The element texts of an array text, or undefined. */
export function elements(text: string): string[] | undefined {
  const bytes = utf8(text);
  return arrayElementSpans(bytes)?.map((span) => cut(bytes, span));
}

/** The text of member `key` in the object text, or null/undefined as memberValueSpan answers. */
export function memberText(text: string, key = 'id'): string | null | undefined {
  const bytes = utf8(text);
  const span = memberValueSpan(bytes, { start: 0, end: bytes.length }, key);
  return span ? cut(bytes, span) : span;
}

/** The span of a whole buffer. */
export const whole = (bytes: Uint8Array): Span => ({ start: 0, end: bytes.length });
