/**
 * How one node's attempts travel: HTTP(S) POSTs over a keep-alive undici Pool. Lives behind
 * the node so another transport (WebSocket) can replace it without the router knowing.
 * Every attempt has a deadline covering connect, headers and body; failures are values.
 */
import { Pool } from 'undici';

/** Largest upstream answer buffered for one attempt. */
export const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;
/** Idle keep-alive connections are closed after this long. */
const KEEP_ALIVE_MS = 60_000;
/** Sockets per pool when max_concurrent does not bound them. */
const MAX_POOL_CONNECTIONS = 1024;

/** What one attempt produced. */
export type AttemptResponse =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string | undefined;
      readonly retryAfter: string | undefined;
      readonly body: Buffer;
    }
  /** No usable response: connect/DNS/TLS failure, reset, or the deadline before headers. */
  | { readonly kind: 'transport_error'; readonly reason: string; readonly timedOut: boolean }
  /** Headers arrived but the body did not (deadline, reset, or over the size cap). */
  | { readonly kind: 'body_error'; readonly reason: string; readonly timedOut: boolean };

/** Extra request headers copied from the client (already lower-case). */
export type ForwardHeaders = Record<string, string> | undefined;

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code ?? e.message ?? String(err);
}

/** A pooled HTTP client for one upstream URL. */
export class HttpTransport {
  readonly #pool: Pool;
  readonly #path: string;

  /** `url` carries secrets (path, query): it is never logged from here. */
  constructor(url: string, maxConcurrent: number) {
    const parsed = new URL(url);
    this.#path = `${parsed.pathname}${parsed.search}`;
    const connections = Number.isFinite(maxConcurrent)
      ? Math.max(1, Math.min(maxConcurrent, MAX_POOL_CONNECTIONS))
      : MAX_POOL_CONNECTIONS;
    this.#pool = new Pool(parsed.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  }

  /** POSTs `body` and reads the whole answer, giving up after `timeoutMs`. */
  async send(
    body: Buffer,
    timeoutMs: number,
    extraHeaders: ForwardHeaders,
  ): Promise<AttemptResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    let headersArrived = false;
    try {
      const response = await this.#pool.request({
        path: this.#path,
        method: 'POST',
        headers: extraHeaders
          ? { ...extraHeaders, 'content-type': 'application/json' }
          : { 'content-type': 'application/json' },
        body,
        signal: controller.signal,
      });
      headersArrived = true;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          controller.abort();
          return { kind: 'body_error', reason: 'answer larger than 512 MiB', timedOut: false };
        }
        chunks.push(chunk);
      }
      return {
        kind: 'answer',
        status: response.statusCode,
        contentType: headerValue(response.headers['content-type']),
        retryAfter: headerValue(response.headers['retry-after']),
        body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size),
      };
    } catch (err) {
      const reason = timedOut ? `no answer within ${timeoutMs} ms` : describe(err);
      return headersArrived
        ? { kind: 'body_error', reason, timedOut }
        : { kind: 'transport_error', reason, timedOut };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes idle connections; in-flight requests finish first. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  /** Drops every connection now. */
  async destroy(): Promise<void> {
    await this.#pool.destroy();
  }
}
