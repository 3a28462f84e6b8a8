/**
 * gzip for big answers (`[server] compression_min_bytes`), as RPC providers do: a 20 MB
 * getProgramAccounts shrinks several-fold on the client's link. Only answers at or above the
 * threshold look at `Accept-Encoding` at all, so the common small answer pays one comparison.
 * zlib runs on libuv's thread pool (buffered answers) or as a stream between the upstream and
 * the client (streamed ones), so the event loop never compresses. cascade's own error
 * answers never come through here.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { createGzip, gzip, type ZlibOptions } from 'node:zlib';
import Negotiator from 'negotiator';
import type { UpstreamStream } from '../node/upstream-stream.js';
import { sendBytes } from './respond.js';

/**
 * zlib level: 1 is zlib's fastest, and keeps most of level 6's saving on JSON at a fraction of
 * its CPU (benchmarks/bench-compression.ts measures both); nginx's default is 1 as well.
 */
export const GZIP_LEVEL = 1;
const GZIP_OPTIONS: ZlibOptions = { level: GZIP_LEVEL };
const GZIP_FIRST = { preferred: ['gzip'] } as const;
const ENCODINGS = ['gzip', 'identity'] as const;

/** Whether the client takes gzip (`Accept-Encoding`, with its q-values). */
export function acceptsGzip(req: IncomingMessage): boolean {
  if (req.headers['accept-encoding'] === undefined) return false;
  return new Negotiator(req).encoding(ENCODINGS, GZIP_FIRST) === 'gzip';
}

/**
 * Whether an answer of `length` bytes goes out gzipped. An answer that could be compressed
 * says `Vary: Accept-Encoding` either way, so caches keep the two forms apart.
 */
function compresses(
  req: IncomingMessage,
  res: ServerResponse,
  length: number,
  minBytes: number,
): boolean {
  if (minBytes === 0 || length < minBytes) return false;
  res.appendHeader('vary', 'Accept-Encoding');
  return acceptsGzip(req);
}

/** Writes a buffered upstream answer, gzipped when it is big enough and the client asks. */
export function sendAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  body: Buffer | string,
  minBytes: number,
): void {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (!compresses(req, res, length, minBytes)) return sendBytes(res, status, contentType, body);
  gzip(body, GZIP_OPTIONS, (err, compressed) => {
    if (err) return sendBytes(res, status, contentType, body);
    res.setHeader('content-encoding', 'gzip');
    sendBytes(res, status, contentType, compressed);
  });
}

/**
 * Relays a streamed upstream answer (always over the stream threshold), through a gzip
 * stream when the client asks. Backpressure is kept end to end: a client that reads slowly
 * fills the gzip stream, which pauses the upstream. A client that leaves tears down the gzip
 * stream, which aborts the upstream request and frees its permit.
 */
export function pipeAnswer(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  contentType: string,
  stream: UpstreamStream,
  minBytes: number,
): void {
  if (!compresses(req, res, stream.head.length, minBytes) || res.destroyed) {
    res.writeHead(status, { 'content-type': contentType });
    stream.pipeTo(res);
    return;
  }
  res.writeHead(status, { 'content-type': contentType, 'content-encoding': 'gzip' });
  const gzipped = createGzip(GZIP_OPTIONS);
  // Either side failing or closing early destroys the other; the stream watches `gzipped`.
  pipeline(gzipped, res, ignore);
  stream.pipeTo(gzipped);
}

/** pipeline's callback: the stream's own listeners already handle how it ended. */
function ignore(): void {}
