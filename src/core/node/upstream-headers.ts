/**
 * Headers between cascade and a node: the ones every request carries (built once per node) and
 * the two read from every answer, straight from undici's raw list.
 */
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
 * The first value of a header in undici's raw list (name, value, name, value…). Reading the
 * two headers we need straight from the bytes skips building a header object per answer.
 */
export function rawHeader(raw: readonly Buffer[] | undefined, name: Buffer): string | undefined {
  if (raw === undefined) return undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (isHeader(raw[i]!, name)) return latin1Text(raw[i + 1]!);
  }
  return undefined;
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
