/**
 * Where a client puts its key, over HTTP and on the WebSocket upgrade alike — so it works in
 * any RPC URL field: the first path segment (`/<key>`, `/<key>/send-request`, which web3.js'
 * port + 1 WebSocket derivation keeps), `?api-key=`, `x-api-key`, or `Authorization: Bearer`.
 * The first one present wins. Nothing here ever travels upstream: cascade forwards neither the
 * URL nor these headers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { PATH_KEY_MAX_CHARS, PATH_KEY_MIN_CHARS, isPathKeyChar } from '../config/key-secret.js';

const SEND_REQUEST = '/send-request';

/**
 * What a request's path resolved to, as far as keys go: the key segment it carried, if any. A
 * connection gets the same object back only for the same path (http/chain-paths.ts), so its
 * identity stands for the key's text (keys/connection-keys.ts).
 */
export interface PathKey {
  readonly key: string | undefined;
}

/** A request's path, split: the path without a key, and the key segment if there was one. */
export interface ProxyPath {
  /** `/` or `/send-request`. */
  readonly path: string;
  readonly key: string | undefined;
}

const ROOT_PATH: ProxyPath = Object.freeze({ path: '/', key: undefined });
const SEND_PATH: ProxyPath = Object.freeze({ path: SEND_REQUEST, key: undefined });

/**
 * `path` as a proxy path, or undefined for any other path: `/`, `/send-request`, and with keys
 * on `/<key>`, `/<key>/`, `/<key>/send-request`, `/<key>/send-request/` (a key is 16–256 of
 * `[A-Za-z0-9_~.-]`). A character walk, not a regex: it runs on every keyed request.
 */
export function proxyPathOf(path: string, keysOn: boolean): ProxyPath | undefined {
  if (path === '/') return ROOT_PATH;
  if (path === SEND_REQUEST) return SEND_PATH;
  if (!keysOn || path.charCodeAt(0) !== 0x2f) return undefined;
  const length = path.length;
  let end = 1;
  while (end < length && end <= PATH_KEY_MAX_CHARS + 1 && isPathKeyChar(path.charCodeAt(end)))
    end++;
  const chars = end - 1;
  if (chars < PATH_KEY_MIN_CHARS || chars > PATH_KEY_MAX_CHARS) return undefined;
  let rest = end === length ? '' : path.slice(end);
  if (rest === '/') rest = '';
  else if (rest.length > SEND_REQUEST.length && rest === `${SEND_REQUEST}/`) rest = SEND_REQUEST;
  if (rest !== '' && rest !== SEND_REQUEST) return undefined;
  return { path: rest === '' ? '/' : SEND_REQUEST, key: path.slice(1, end) };
}

function queryKey(url: string): string | undefined {
  const at = url.indexOf('?');
  if (at === -1) return undefined;
  const value = new URLSearchParams(url.slice(at + 1)).get('api-key');
  return value === null || value === '' ? undefined : value;
}

function headerKey(headers: IncomingHttpHeaders): string | undefined {
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey;
  const auth = headers.authorization;
  if (auth !== undefined && auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') {
    return auth.slice(7).trim() || undefined;
  }
  return undefined;
}

/**
 * The key a request presents, or undefined when it carries none: `pathKey` (the key segment its
 * path carried, found where the path was resolved to a chain), else `?api-key=`, else a header.
 */
export function presentedKey(
  pathKey: string | undefined,
  url: string | undefined,
  headers: IncomingHttpHeaders,
): string | undefined {
  return pathKey ?? queryKey(url ?? '/') ?? headerKey(headers);
}

/** `url` with any key cut out (path segment or `api-key`), safe to log. */
export function redactedRequestUrl(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  const path = query === -1 ? raw : raw.slice(0, query);
  const keyed = proxyPathOf(path, true);
  const bare = keyed?.key === undefined ? path : `/***${keyed.path === '/' ? '' : keyed.path}`;
  if (query === -1) return bare;
  const params = new URLSearchParams(raw.slice(query + 1));
  if (params.has('api-key')) params.set('api-key', '***');
  return `${bare}?${params.toString()}`;
}
