import type { IncomingMessage } from 'node:http';

/** Why a body could not be read. */
export type BodyFailure = 'too_large' | 'aborted';

/**
 * Reads a request body into one Buffer, refusing anything over `maxBytes` as early as
 * possible (from Content-Length before reading, else as the bytes arrive) so a hostile
 * client cannot make the server buffer more than the cap. Callback-based: no promise per
 * request on the hot path.
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  done: (body: Buffer | undefined, failure: BodyFailure | undefined) => void,
): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    done(undefined, 'too_large');
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (body: Buffer | undefined, failure: BodyFailure | undefined): void => {
    if (finished) return;
    finished = true;
    done(body, failure);
  };
  req.on('data', (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > maxBytes) {
      chunks.length = 0;
      finish(undefined, 'too_large');
      return;
    }
    chunks.push(chunk);
  });
  req.on('end', () =>
    finish(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), undefined),
  );
  req.on('error', () => finish(undefined, 'aborted'));
  // 'close' before 'end' means the client went away mid-body ('aborted' is deprecated).
  req.on('close', () => finish(undefined, 'aborted'));
}
