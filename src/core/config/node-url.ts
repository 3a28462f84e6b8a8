/**
 * A node's upstream URLs as config gives them: `$VAR` references substituted from the
 * environment, the scheme and the %-escapes of the credentials checked, the secret parts masked
 * for display, and a warning when a secret would cross the network in plain text.
 */
import type { ProblemList } from './problem-list.js';
import { redactUrl } from './redact-url.js';
import { substituteEnv } from './env-substitution.js';
import { isLoopback } from './server-section.js';

/** The schemes a node URL may have: http(s) for `url`, ws(s) for `ws_url`. */
const SCHEMES = {
  http: {
    allowed: ['http:', 'https:'],
    example: 'http://127.0.0.1:8899',
    plain: 'http:',
    secure: 'https://',
  },
  ws: { allowed: ['ws:', 'wss:'], example: 'ws://127.0.0.1:8900', plain: 'ws:', secure: 'wss://' },
} as const;

/**
 * Reads one node URL (`url`, or `ws_url` with `kind` 'ws'): env references substituted, scheme
 * and credentials checked; the redacted form is the one logs and tables show.
 */
export function readNodeUrl(
  raw: string | undefined,
  name: string,
  env: NodeJS.ProcessEnv,
  at: { file: string; path: string; problems: ProblemList },
  kind: keyof typeof SCHEMES = 'http',
): { url: string; redactedUrl: string; hasCredentials: boolean } | undefined {
  if (raw === undefined) return undefined;
  const schemes = SCHEMES[kind];
  const { file, path, problems } = at;
  const sub = substituteEnv(raw, env);
  for (const variable of sub.missing) {
    problems.error(
      file,
      path,
      `env var ${variable} is required but not set (node '${name}')`,
      `export ${variable}=… or add it to .env in the working directory`,
    );
  }
  for (const reference of sub.malformed) {
    problems.error(
      file,
      path,
      `malformed variable reference '${reference}' (node '${name}')`,
      'write $NAME or ${NAME}',
    );
  }
  if (sub.missing.length > 0 || sub.malformed.length > 0) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(sub.value);
  } catch {
    problems.error(
      file,
      path,
      `invalid URL for node '${name}'`,
      `write an absolute URL with its scheme, e.g. "${schemes.example}"`,
    );
    return undefined;
  }
  if (!(schemes.allowed as readonly string[]).includes(parsed.protocol)) {
    problems.error(
      file,
      path,
      `unsupported scheme '${parsed.protocol}' for node '${name}'`,
      kind === 'http'
        ? 'cascade proxies http:// and https:// upstreams'
        : 'write a ws:// or wss:// URL (or omit ws_url to derive it from url)',
    );
    return undefined;
  }
  if (!isDecodable(parsed.username) || !isDecodable(parsed.password)) {
    problems.error(
      file,
      path,
      `the user:password of node '${name}' holds a '%' that starts no valid %-escape`,
      'write a literal % as %25 (the credentials are percent-decoded for Basic auth)',
    );
    return undefined;
  }
  const redactedUrl = redactUrl(sub.masked);
  const hasSecret = sub.masked.includes('***') || parsed.search !== '' || parsed.password !== '';
  if (hasSecret && isPlainRemote(parsed)) {
    problems.warn(
      file,
      path,
      `node '${name}' sends what looks like an API key over plain ${kind}`,
      `use ${schemes.secure}`,
    );
  }
  const hasCredentials = parsed.username !== '' || parsed.password !== '';
  return { url: sub.value, redactedUrl, hasCredentials };
}

/** A URL whose requests cross the network unencrypted (http: or ws:, not to this machine). */
export function isPlainRemote(url: URL): boolean {
  return (url.protocol === 'http:' || url.protocol === 'ws:') && !isLoopback(url.hostname);
}

/** Whether percent-decoding `text` works (the transport decodes URL credentials). */
function isDecodable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
