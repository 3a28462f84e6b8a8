/**
 * Who an HTTP request (or a WebSocket upgrade) is, by its client key: the key it presents
 * (core/keys/presented-key.ts: path, `?api-key=`, `x-api-key`, `Authorization: Bearer`) looked
 * up once, from the client's address (through trusted proxies, for per-IP limits). Also the
 * two things a key changes on an HTTP answer: `Retry-After` on a 429, and which origins may
 * read it (a key's `origins`, else `[server] cors_origins`).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { ClientKeys } from '../keys/client-keys.js';
import { isRefusal } from '../keys/client-keys.js';
import { chainRefusal, type KeyRefusal } from '../keys/key-refusal.js';
import { presentedKey, type PathKey } from '../keys/presented-key.js';
import type { KeyedCaller } from '../serving/key-gate.js';
import { clientAddress } from './client-address.js';
import type { CorsPolicy } from './cors.js';

/**
 * The caller of `req`: a key, keyless (undefined, when keys are optional), or a refusal.
 * `headers` are `req.headers`, read once by the door (each read of the getter costs two
 * megamorphic loads on the request path).
 */
export function callerOf(
  req: IncomingMessage,
  headers: IncomingHttpHeaders,
  keys: ClientKeys,
  trustedProxies: BlockList | undefined,
  /** What the request's path resolved to: the key segment it had, if any. */
  path: PathKey,
  /** The chain the request's path reached: a key scoped to others is refused (403). */
  chain: string,
): KeyedCaller | KeyRefusal | undefined {
  const ip = clientAddress(req, trustedProxies);
  const presented = presentedKey(path.key, req.url, headers);
  // A key from the path comes with its hit: the connection's same path again needs no compare.
  const source = path.key === undefined ? undefined : path;
  const who = keys.identify(presented, ip, req.socket, source);
  if (who === undefined || isRefusal(who)) {
    keys.countUnkeyed(who?.reason ?? 'keyless');
    return who;
  }
  const refused = chainRefusal(who, chain);
  if (refused !== undefined) {
    who.count(refused.reason);
    return refused;
  }
  return { key: who, ip, origin: headers.origin };
}

/** Narrows what `callerOf` returned. */
export function isCallerRefusal(who: KeyedCaller | KeyRefusal | undefined): who is KeyRefusal {
  return who !== undefined && !('key' in who);
}

/** `Retry-After` for a refusal that has one. */
export function setRefusalHeaders(res: ServerResponse, refusal: KeyRefusal): void {
  if (refusal.retryAfterSeconds !== undefined)
    res.setHeader('retry-after', String(refusal.retryAfterSeconds));
}

/**
 * With keys on, the proxy paths answer preflights for every key's origins; once the caller is
 * known, only its own may read the answer: a key with `origins`, those; any other caller,
 * `cors_origins`. An origin that may not read it gets no CORS header at all.
 */
export function limitCorsToCaller(
  headers: IncomingHttpHeaders,
  res: ServerResponse,
  caller: KeyedCaller | undefined,
  serverCors: CorsPolicy | undefined,
): void {
  const origin = headers.origin;
  if (origin === undefined || !res.hasHeader('access-control-allow-origin')) return;
  const keyOrigins = caller?.key.config.origins ?? [];
  const allowed =
    keyOrigins.length > 0 ? caller!.key.allowsOrigin(origin) : serverCors?.allows(origin) === true;
  if (!allowed) res.removeHeader('access-control-allow-origin');
  else if (res.getHeader('access-control-allow-origin') === '*')
    res.setHeader('access-control-allow-origin', origin);
}

/** `x-cascade-credits-remaining` (`[server] credits_remaining_header`): what the key has left. */
export function setCreditsRemaining(res: ServerResponse, caller: KeyedCaller | undefined): void {
  const key = caller?.key;
  const budget = key?.budget;
  if (key === undefined || budget === undefined || res.headersSent) return;
  res.setHeader('x-cascade-credits-remaining', String(Math.max(0, budget - key.used)));
}
