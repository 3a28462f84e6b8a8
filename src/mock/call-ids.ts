/**
 * The ids to echo, as the exact JSON text the client sent. geth keeps a request's id as raw
 * bytes (rpc/json.go: `ID json.RawMessage`) and writes them back, so an id such as
 * 12345678901234567890, 1.50 or "\u0041" comes back byte for byte; re-serialising the parsed
 * value would round the first, respell the second and unescape the third.
 *
 * Finding an id's bytes costs a scan of its call (~250 ns), so it is done only when the parsed
 * value could be spelled differently: in a body without backslashes, fractions or exponents,
 * every string id and every safe-integer id other than -0 is written exactly as
 * JSON.stringify writes it (JSON forbids raw control characters and leading zeros; non-ASCII
 * text is escaped by neither side).
 */
import {
  arrayElementSpans,
  memberValueSpan,
  trimmedSpan,
  type Span,
} from '../core/protocol/json-spans.js';
import { isRecord } from './method-spec.js';

/**
 * Escapes, fractions and exponents: the spellings JSON.stringify would change. A fraction
 * followed by a quote is inside a string (a number cannot end at a quote), which keeps every
 * body's `"jsonrpc":"2.0"` from matching; other look-alikes in strings only cost a scan.
 */
const RESPELLED = /\\|\d\.\d+(?![\d"])|\d[eE][+-]?\d/;

/** Whether every string and safe-integer id in `text` is spelled canonically. */
export function isPlainText(text: string): boolean {
  return !RESPELLED.test(text);
}

/** Returned when only the call's bytes can tell how its id was spelled. */
const SCAN = 1;

/**
 * The call's id as JSON text when the parsed value tells it: `null` for a null or non-scalar
 * id or a non-object call, undefined for a notification (no `id` member), SCAN otherwise.
 */
function parsedIdJson(call: unknown, plain: boolean): string | undefined | typeof SCAN {
  if (!isRecord(call)) return 'null';
  if (!('id' in call)) return undefined;
  const id = call.id;
  if (typeof id === 'string') return plain ? JSON.stringify(id) : SCAN;
  if (typeof id !== 'number') return 'null';
  return plain && Number.isSafeInteger(id) && !Object.is(id, -0) ? JSON.stringify(id) : SCAN;
}

/** The id's bytes within `span`; its re-serialised value when the scan is unsure. */
function scannedIdJson(call: unknown, bytes: Buffer, span: Span | undefined): string {
  // Undefined when the scan is unsure (a repeated or escaped member name).
  const raw = span === undefined ? undefined : memberValueSpan(bytes, span, 'id');
  if (raw) return bytes.toString('utf8', raw.start, raw.end);
  return JSON.stringify((call as { id: unknown }).id) ?? 'null';
}

/** The id of a single call in `bytes`, as the client spelled it. */
export function singleIdJson(call: unknown, bytes: Buffer, plain: boolean): string | undefined {
  const parsed = parsedIdJson(call, plain);
  return parsed === SCAN ? scannedIdJson(call, bytes, trimmedSpan(bytes)) : parsed;
}

/** The ids of a batch's calls in `bytes`, in order; element spans are found only if needed. */
export function batchIdJsons(
  calls: readonly unknown[],
  bytes: Buffer,
  plain: boolean,
): Array<string | undefined> {
  let spans: Span[] | null | undefined;
  const ids = new Array<string | undefined>(calls.length);
  for (let i = 0; i < calls.length; i++) {
    const parsed = parsedIdJson(calls[i], plain);
    if (parsed !== SCAN) {
      ids[i] = parsed;
      continue;
    }
    if (spans === undefined) {
      const found = arrayElementSpans(bytes);
      spans = found !== undefined && found.length === calls.length ? found : null;
    }
    ids[i] = scannedIdJson(calls[i], bytes, spans?.[i]);
  }
  return ids;
}
