/**
 * Headers between cascade and a node: the ones every request carries (built once per node) and
 * the two read from every answer, straight from undici's raw list.
 */
import { spelledAt } from '../protocol/json-lexer.js';
import { latin1Text } from '../protocol/latin1-text.js';

/** True when `name` equals the lower-case ASCII `expected`, ignoring case. */
function isHeader(name: Buffer, expected: Buffer): boolean {
  if (name.length !== expected.length) return false;
  for (let i = 0; i < name.length; i++) {
    // ORing 0x20 lower-cases ASCII letters; `expected` holds only letters and '-'.
    if ((name[i]! | 0x20) !== expected[i]) return false;
  }
  return true;
}

/**
 * One header read from every answer, straight from undici's raw list (name, value, name,
 * value…): reading the bytes skips building a header object per answer. A node repeats its
 * values (`application/json` on every answer), so the last value's text is kept: a repeat is a
 * byte comparison, not a new string made by a call into the runtime (~700 instructions a read).
 */
export class RawHeader {
  readonly #name: Buffer;
  /** The last value read, copied (undici's may share a socket buffer that is reused). */
  #bytes = Buffer.alloc(0);
  #text = '';

  /** `name` in lower case. */
  constructor(name: string) {
    this.#name = Buffer.from(name, 'latin1');
  }

  /** The header's first value as latin1 text, or undefined when the answer has none. */
  read(raw: readonly Buffer[] | undefined): string | undefined {
    if (raw === undefined) return undefined;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (isHeader(raw[i]!, this.#name)) return this.#textOf(raw[i + 1]!);
    }
    return undefined;
  }

  #textOf(value: Buffer): string {
    const last = this.#bytes;
    if (value.length === last.length && spelledAt(value, last, 0)) return this.#text;
    this.#bytes = Buffer.from(value);
    this.#text = latin1Text(value);
    return this.#text;
  }
}

/**
 * The headers every request to a node carries, built once: the configured ones, HTTP Basic
 * credentials from the URL's user:password (percent-decoded, as browsers and viem do), and
 * the content type. Secrets: never logged.
 */
export function nodeRequestHeaders(
  url: URL,
  configured: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { ...configured };
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }
  headers['content-type'] = 'application/json';
  return Object.freeze(headers);
}
