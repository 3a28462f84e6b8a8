/**
 * CORS for browser apps (`[server] cors_origins`). Every answer says which origin may read
 * it; a preflight is answered here, never sent to a node. An origin that is not allowed gets
 * no CORS headers at all, so the browser refuses to hand the answer to the page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ANY_ORIGIN } from '../config/origin-list.js';

/**
 * Request headers a page may send: what @solana/web3.js, @solana/kit, viem and ethers set
 * from a browser (the CORS-safelisted ones aside), the tracing headers cascade forwards, and
 * `x-api-key` (a client key; `authorization` carries one too).
 */
export const CORS_ALLOWED_HEADERS =
  'accept, authorization, content-type, solana-client, traceparent, tracestate, x-api-key, x-request-id';
/** How long a browser may reuse a preflight's answer (Chromium's own cap is 2 hours). */
export const CORS_MAX_AGE_SECONDS = 7200;

/** Which origins may call cascade, decided once at startup. */
export class CorsPolicy {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  private constructor(origins: readonly string[]) {
    this.#any = origins.includes(ANY_ORIGIN);
    this.#origins = new Set(origins);
  }

  /** The policy for `cors_origins`; undefined when the list is empty (CORS off). */
  static from(origins: readonly string[]): CorsPolicy | undefined {
    return origins.length === 0 ? undefined : new CorsPolicy(origins);
  }

  /** Whether pages of `origin` may call cascade (the WebSocket upgrade asks this). */
  allows(origin: string): boolean {
    return this.#any || this.#origins.has(origin);
  }

  /**
   * Marks an answer as readable by the request's origin when it is allowed (`*` when any
   * origin is). `Vary: Origin` keeps caches from serving one origin's answer to another.
   * Returns whether the origin is allowed.
   */
  decorate(req: IncomingMessage, res: ServerResponse): boolean {
    res.setHeader('vary', 'Origin');
    if (this.#any) {
      res.setHeader('access-control-allow-origin', '*');
      return true;
    }
    const origin = req.headers.origin;
    if (origin === undefined || !this.#origins.has(origin)) return false;
    res.setHeader('access-control-allow-origin', origin);
    return true;
  }

  /**
   * Answers `OPTIONS` (a preflight when it asks for a method) with 204, after `decorate`.
   * `methods` are the path's methods, e.g. "POST".
   */
  preflight(req: IncomingMessage, res: ServerResponse, allowed: boolean, methods: string): void {
    if (allowed && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('access-control-allow-methods', methods);
      res.setHeader('access-control-allow-headers', CORS_ALLOWED_HEADERS);
      res.setHeader('access-control-max-age', String(CORS_MAX_AGE_SECONDS));
    }
    res.setHeader('allow', `${methods}, OPTIONS`);
    res.writeHead(204).end();
  }
}
