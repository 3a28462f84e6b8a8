/**
 * Provider URLs carry API keys (in the query, or as a long path segment). Results files and
 * tables show them redacted.
 */

/** Path segments at least this long read as keys. */
const KEY_LENGTH = 16;

/** `https://host/v2/<key>?api-key=<key>` → `https://host/v2/***?api-key=***`. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '***';
  }
  parsed.username = parsed.username ? '***' : '';
  parsed.password = parsed.password ? '***' : '';
  const segments = parsed.pathname
    .split('/')
    .map((segment) => (segment.length >= KEY_LENGTH ? '***' : segment));
  const query = [...parsed.searchParams.keys()].map((key) => `${key}=***`).join('&');
  return `${parsed.origin}${segments.join('/')}${query ? `?${query}` : ''}`;
}
