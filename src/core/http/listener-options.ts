import type { ServerOptions } from 'node:http';

/** Node's own headers timeout, kept when the keep-alive timeout leaves room for it. */
const HEADERS_TIMEOUT_MS = 10_000;
/** How long a client may take to send a whole request. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The client listener's timeouts. `keepAliveTimeoutMs` is how long an idle connection stays
 * open; behind a load balancer it must outlast the balancer's own idle timeout, or the
 * balancer reuses a connection cascade has just closed and answers its client 502. The
 * headers timeout stays above it (long-standing advice for Node behind balancers: a
 * connection must never be cut for slow headers before it is idle-closed), and Node requires
 * the request timeout to be at least the headers timeout.
 */
export function listenerOptions(keepAliveTimeoutMs: number): ServerOptions {
  const headersTimeout = Math.max(HEADERS_TIMEOUT_MS, keepAliveTimeoutMs + 1000);
  return {
    keepAliveTimeout: keepAliveTimeoutMs,
    headersTimeout,
    requestTimeout: Math.max(REQUEST_TIMEOUT_MS, headersTimeout),
  };
}
