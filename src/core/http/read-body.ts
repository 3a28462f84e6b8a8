import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { joinChunks } from '../node/body-chunks.js';

/**
 * What collects one request body. An interface, not a base class: the proxy's per-request
 * object is one, and Node 20's V8 does not inline a derived class's `super()` call (each costs
 * a generic construct, ~250 instructions a request). The listeners reading a body are shared
 * module-level functions that find their reader through the request, so reading a body costs
 * no closure.
 */
export interface BodyReader {
  /** The body's first chunk (start with undefined): node/body-chunks.ts says why a field. */
  firstChunk: Buffer | undefined;
  /** The chunks after the first (start with undefined). */
  moreChunks: Buffer[] | undefined;
  /** Bytes so far (start with 0); -1 once the read is settled. */
  size: number;
  /** The most bytes taken: more is refused as early as it is known. */
  readonly limit: number;
  /**
   * Called once with the whole body, or with `undefined` when it exceeded the cap. A client
   * that leaves mid-body never gets a call: nothing was taken for it, so nothing is owed.
   */
  bodyRead(body: Buffer | undefined): void;
}

/** Settles `reader`'s read once; later data and end events are ignored. */
function settle(reader: BodyReader, body: Buffer | undefined): void {
  if (reader.size < 0) return;
  reader.size = -1;
  reader.firstChunk = undefined;
  reader.moreChunks = undefined;
  reader.bodyRead(body);
}

/** A request being read: its reader rides on it (one property, set before any data event). */
type Reading = IncomingMessage & { bodyReader: BodyReader };

function onData(this: Reading, chunk: Buffer): void {
  const reader = this.bodyReader;
  const size = reader.size;
  if (size < 0) return;
  reader.size = size + chunk.length;
  if (reader.size > reader.limit) settle(reader, undefined);
  else if (reader.firstChunk === undefined) reader.firstChunk = chunk;
  else if (reader.moreChunks === undefined) reader.moreChunks = [chunk];
  else reader.moreChunks.push(chunk);
}

function onEnd(this: Reading): void {
  const reader = this.bodyReader;
  if (reader.size < 0) return;
  settle(reader, joinChunks(reader.firstChunk, reader.moreChunks, reader.size));
}

/** 10 ** n for the lengths a Content-Length can have without being over any limit we take. */
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, n) => 10 ** n);

/**
 * Whether a declared Content-Length is over `limit`. Node's parser takes only digits there,
 * so a text of n digits is below 10 ** n: when that is at most limit + 1, it cannot be over,
 * and the common small request needs no string-to-number conversion (~300 instructions).
 */
export function declaredOver(declared: string, limit: number): boolean {
  const bound = POWERS_OF_TEN[declared.length];
  if (bound !== undefined && bound <= limit + 1) return false;
  return Number(declared) > limit;
}

/**
 * Reads a request body into one Buffer, refusing anything over the reader's limit as early as
 * possible (from Content-Length before reading, else as the bytes arrive) so a hostile client
 * cannot make the server buffer more than the cap.
 */
export function readBody(
  req: IncomingMessage,
  reader: BodyReader,
  /** `req.headers`, when the caller has read them already. */
  headers: IncomingHttpHeaders = req.headers,
): void {
  const declared = headers['content-length'];
  if (declared !== undefined && declaredOver(declared, reader.limit)) {
    settle(reader, undefined);
    return;
  }
  (req as Reading).bodyReader = reader;
  req.on('data', onData);
  req.on('end', onEnd);
}

/** A reader that hands the body to a callback (for routes off the hot path). */
export class CallbackBodyReader implements BodyReader {
  firstChunk: Buffer | undefined = undefined;
  moreChunks: Buffer[] | undefined = undefined;
  size = 0;

  constructor(
    readonly limit: number,
    private readonly callback: (body: Buffer | undefined) => void,
  ) {}

  bodyRead(body: Buffer | undefined): void {
    this.callback(body);
  }
}
