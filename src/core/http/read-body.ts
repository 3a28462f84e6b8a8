import { IncomingMessage } from 'node:http';

/**
 * Called once with the whole body, or with `undefined` when it exceeded the cap. A client
 * that leaves mid-body never gets a call: nothing was taken for it, so nothing is owed.
 */
export type BodyCallback<R extends IncomingMessage> = (req: R, body: Buffer | undefined) => void;

/**
 * The request class the proxy's server creates (createServer's `IncomingMessage` option):
 * the body reader's state lives in fields of a fixed shape, so its listeners are shared
 * module-level functions instead of closures made for every request.
 */
export class BodyRequest extends IncomingMessage {
  bodyChunks: Buffer[] | undefined = undefined;
  bodySize = 0;
  bodyLimit = 0;
  bodyDone: BodyCallback<never> | undefined = undefined;
}

/** The reader's view of a request (a BodyRequest, or a plain one given the same fields). */
type Reading = IncomingMessage &
  Pick<BodyRequest, 'bodyChunks' | 'bodySize' | 'bodyLimit'> & {
    bodyDone: BodyCallback<Reading> | undefined;
  };

function onData(this: Reading, chunk: Buffer): void {
  const done = this.bodyDone;
  if (done === undefined) return;
  const size = this.bodySize + chunk.length;
  this.bodySize = size;
  if (size > this.bodyLimit) {
    this.bodyDone = undefined;
    this.bodyChunks = undefined;
    done(this, undefined);
    return;
  }
  this.bodyChunks!.push(chunk);
}

function onEnd(this: Reading): void {
  const done = this.bodyDone;
  if (done === undefined) return;
  this.bodyDone = undefined;
  const chunks = this.bodyChunks!;
  this.bodyChunks = undefined;
  done(this, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.bodySize));
}

/**
 * Reads a request body into one Buffer, refusing anything over `maxBytes` as early as
 * possible (from Content-Length before reading, else as the bytes arrive) so a hostile
 * client cannot make the server buffer more than the cap. Callback-based: no promise and
 * no closure per request on the hot path.
 */
export function readBody<R extends IncomingMessage>(
  req: R,
  maxBytes: number,
  done: BodyCallback<R>,
): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    done(req, undefined);
    return;
  }
  const reading = req as unknown as Reading;
  reading.bodyChunks = [];
  reading.bodySize = 0;
  reading.bodyLimit = maxBytes;
  reading.bodyDone = done as unknown as BodyCallback<Reading>;
  req.on('data', onData);
  req.on('end', onEnd);
}
