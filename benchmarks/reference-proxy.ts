/**
 * The bare reference proxy the hot-path benchmark measures cascade against: what a JSON-RPC
 * hop costs with nothing but the unavoidable work. A node:http server reads the body, finds
 * the method with one bounded scan over the leading bytes (JSON.parse only when the scan is
 * unsure, 400 when there is no method), and forwards the original bytes round-robin to one
 * undici Pool per upstream through `pool.dispatch` with a callback handler — no promises, no
 * timers, no limits, no metrics. The upstream's status, content-type and body go back as is.
 *
 * Runnable as a child process; prints its URL on stdout and stops on SIGTERM/SIGINT:
 *
 *     node dist-benchmarks/benchmarks/reference-proxy.js --port 0 --upstream http://127.0.0.1:8891 [--upstream …]
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';

/** How to start a reference proxy. */
export interface ReferenceProxyOptions {
  /** Upstream base URLs (http or https); requests go to their path, round-robin. */
  readonly upstreams: readonly string[];
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
}

/** A running reference proxy. */
export interface ReferenceProxy {
  /** `http://HOST:PORT` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const OPEN_BRACE = 0x7b;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longer names (or escapes, or non-ASCII) take the JSON.parse path. */
const MAX_METHOD_SCAN = 128;
const METHOD_KEY = Buffer.from('"method"', 'latin1');
const JSON_TYPE = 'application/json';
/** undici turns headers into a string per request and never writes to this object. */
const FORWARD_HEADERS = Object.freeze({ 'content-type': JSON_TYPE });
const PARSE_ERROR = Buffer.from(
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
);
const BAD_GATEWAY = Buffer.from(
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"upstream failed"}}',
);

function skipSpace(body: Buffer, from: number): number {
  let i = from;
  for (;;) {
    const byte = body[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return i;
    i++;
  }
}

/** The method of a body shaped `{"method":"name"…`, or undefined when the scan is unsure. */
export function scanLeadingMethod(body: Buffer): string | undefined {
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(body, i + 1);
  for (let k = 0; k < METHOD_KEY.length; k++) {
    if (body[i + k] !== METHOD_KEY[k]) return undefined;
  }
  i = skipSpace(body, i + METHOD_KEY.length);
  if (body[i] !== 0x3a) return undefined;
  i = skipSpace(body, i + 1);
  if (body[i] !== QUOTE) return undefined;
  const start = i + 1;
  const limit = Math.min(body.length, start + MAX_METHOD_SCAN + 1);
  for (let j = start; j < limit; j++) {
    const byte = body[j]!;
    if (byte === QUOTE) {
      // A second "method" key would win in JSON.parse: let the slow path decide.
      return body.indexOf(METHOD_KEY, j + 1) === -1 ? body.toString('latin1', start, j) : undefined;
    }
    if (byte === BACKSLASH || byte >= 0x80 || byte < 0x20) return undefined;
  }
  return undefined;
}

/** The method of a JSON-RPC body or batch (its first element), or undefined when it has none. */
export function methodOf(body: Buffer): string | undefined {
  const scanned = scanLeadingMethod(body);
  if (scanned !== undefined) return scanned;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const first: unknown = Array.isArray(parsed) ? parsed[0] : parsed;
  const method = (first as { method?: unknown } | null)?.method;
  return typeof method === 'string' ? method : undefined;
}

function send(res: ServerResponse, status: number, contentType: string, body: Buffer): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}

/** The upstream's content-type from undici's raw header list (name, value, name, value…). */
function contentTypeOf(rawHeaders: Buffer[]): string {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
      return rawHeaders[i + 1]!.toString('latin1');
    }
  }
  return JSON_TYPE;
}

/** One forwarded request: undici's callback handler, buffering the answer. */
class Exchange implements Dispatcher.DispatchHandler {
  #status = 502;
  #contentType = JSON_TYPE;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(readonly res: ServerResponse) {}

  onConnect(): void {}

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    this.#status = status;
    this.#contentType = contentTypeOf(rawHeaders);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return true;
  }

  onComplete(): void {
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size);
    send(this.res, this.#status, this.#contentType, body);
  }

  onError(): void {
    if (!this.res.headersSent) send(this.res, 502, JSON_TYPE, BAD_GATEWAY);
    else this.res.destroy();
  }
}

/** The upstreams and the round-robin cursor. */
class Upstreams {
  readonly #pools: Pool[];
  readonly #paths: string[];
  #next = 0;

  constructor(urls: readonly string[]) {
    if (urls.length === 0) throw new RangeError('reference proxy: at least one upstream');
    const parsed = urls.map((url) => new URL(url));
    this.#paths = parsed.map((url) => `${url.pathname}${url.search}`);
    this.#pools = parsed.map(
      (url) =>
        new Pool(url.origin, {
          pipelining: 1,
          keepAliveTimeout: 60_000,
          keepAliveMaxTimeout: 60_000,
          headersTimeout: 0,
          bodyTimeout: 0,
        }),
    );
  }

  forward(body: Buffer, res: ServerResponse): void {
    const index = this.#next;
    this.#next = index + 1 === this.#pools.length ? 0 : index + 1;
    this.#pools[index]!.dispatch(
      { path: this.#paths[index]!, method: 'POST', headers: FORWARD_HEADERS, body },
      new Exchange(res),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools.map((pool) => pool.close()));
  }
}

/** A request being read: listeners find it through the request object, no closures. */
interface Reading extends IncomingMessage {
  hotChunks: Buffer[];
  hotRes: ServerResponse;
  hotUpstreams: Upstreams;
}

function onRequestData(this: Reading, chunk: Buffer): void {
  this.hotChunks.push(chunk);
}

function onRequestEnd(this: Reading): void {
  const chunks = this.hotChunks;
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  if (methodOf(body) === undefined) return send(this.hotRes, 400, JSON_TYPE, PARSE_ERROR);
  this.hotUpstreams.forward(body, this.hotRes);
}

function handle(upstreams: Upstreams, req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST', 'content-length': 0 });
    res.end();
    return;
  }
  const reading = req as Reading;
  reading.hotChunks = [];
  reading.hotRes = res;
  reading.hotUpstreams = upstreams;
  req.on('data', onRequestData);
  req.on('end', onRequestEnd);
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Starts a reference proxy; resolves once it listens. */
export async function startReferenceProxy(options: ReferenceProxyOptions): Promise<ReferenceProxy> {
  const upstreams = new Upstreams(options.upstreams);
  const host = options.host ?? '127.0.0.1';
  const server = createServer({ keepAliveTimeout: 5_000 }, (req, res) =>
    handle(upstreams, req, res),
  );
  const port = await listen(server, host, options.port ?? 0);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await upstreams.close();
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '0' },
      upstream: { type: 'string', multiple: true, default: [] },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(`--port ${values.port}: expected 0..65535`);
  }
  const proxy = await startReferenceProxy({ upstreams: values.upstream, host: values.host, port });
  process.stdout.write(`${proxy.url}\n`);
  const stop = (): void => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    void proxy.close();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`reference-proxy: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
