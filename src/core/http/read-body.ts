import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/**
 * Collects one request body. Subclasses say what happens with it; the listeners reading it
 * are shared module-level functions that find their reader through the request, so reading
 * a body costs no closure.
 */
export abstract class BodyReader {
  /** The chunks so far; undefined once the read is settled. */
  chunks: Buffer[] | undefined = [];
  size = 0;

  constructor(readonly limit: number) {}

  /**
   * Called once with the whole body, or with `undefined` when it exceeded the cap. A client
   * that leaves mid-body never gets a call: nothing was taken for it, so nothing is owed.
   */
  protected abstract bodyRead(body: Buffer | undefined): void;

  /** Settles the read once; later data and end events are ignored. */
  settle(body: Buffer | undefined): void {
    if (this.chunks === undefined) return;
    this.chunks = undefined;
    this.bodyRead(body);
  }
}

/** A request being read: its reader rides on it (one property, set before any data event). */
type Reading = IncomingMessage & { bodyReader: BodyReader };

function onData(this: Reading, chunk: Buffer): void {
  const reader = this.bodyReader;
  const chunks = reader.chunks;
  if (chunks === undefined) return;
  reader.size += chunk.length;
  if (reader.size > reader.limit) reader.settle(undefined);
  else chunks.push(chunk);
}

function onEnd(this: Reading): void {
  const reader = this.bodyReader;
  const chunks = reader.chunks;
  if (chunks === undefined) return;
  reader.settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, reader.size));
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
  if (declared !== undefined && Number(declared) > reader.limit) {
    reader.settle(undefined);
    return;
  }
  (req as Reading).bodyReader = reader;
  req.on('data', onData);
  req.on('end', onEnd);
}

/** A reader that hands the body to a callback (for routes off the hot path). */
export class CallbackBodyReader extends BodyReader {
  constructor(
    limit: number,
    private readonly callback: (body: Buffer | undefined) => void,
  ) {
    super(limit);
  }

  protected bodyRead(body: Buffer | undefined): void {
    this.callback(body);
  }
}
