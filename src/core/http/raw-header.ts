/**
 * One request header read from `req.rawHeaders`, for the request path. Reading `req.headers`
 * makes Node build an object of every header the first time (a property store per header,
 * then a dictionary lookup per read): more than the proxy hop spends on most of its own work,
 * for the two or three headers it needs.
 *
 * The value is what `req.headers[name]` gives: a header sent more than once has its values
 * joined with ", ", except the names Node keeps only once (FIRST_ONLY: the first wins).
 */
import type { IncomingMessage } from 'node:http';

/** Of the names read here, those Node's `req.headers` keeps once (its first value). */
const FIRST_ONLY = new Set(['host', 'content-length']);

/** Whether `raw` is `name` (given in lower case) in any letter case, without a copy. */
function sameName(raw: string, name: string): boolean {
  if (raw.length !== name.length) return false;
  // `| 0x20` lowers a letter; of a token's characters only `-` maps to `-`, and names read
  // here are letters and `-`.
  for (let k = 0; k < name.length; k++) {
    if ((raw.charCodeAt(k) | 0x20) !== name.charCodeAt(k)) return false;
  }
  return true;
}

/** Header `name` (lower case) of `req`, as `req.headers[name]` would give it; undefined if absent. */
export function rawHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!sameName(raw[i]!, name)) continue;
    if (value === undefined) {
      value = raw[i + 1]!;
      if (FIRST_ONLY.has(name)) return value;
    } else {
      value = `${value}, ${raw[i + 1]!}`;
    }
  }
  return value;
}
