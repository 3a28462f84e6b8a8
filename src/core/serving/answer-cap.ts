/**
 * A key's `max_answer_bytes` (issue 29): an answer bigger than the key may have is refused
 * before any of it is sent to the key's client. A whole answer is measured; a streamed one is
 * read into memory up to the cap and, past it, cut off upstream (its node is not judged: it
 * answered, the key may not have it) — so the cap also bounds what cascade holds for it.
 */
import { Writable } from 'node:stream';
import { answerTooLarge } from '../keys/heavy-read-refusal.js';
import { UpstreamStream } from '../node/upstream-stream.js';
import type { RouteResult } from '../routing/route-context.js';

type Answer = Extract<RouteResult, { kind: 'answer' }>;

/** The refusal of `answer` (`bytes` long or more): its node was asked and is named. */
function refused(answer: Answer, bytes: number, cap: number, key: string): RouteResult {
  const { node, attempts, credits } = answer;
  return { kind: 'refused', refusal: answerTooLarge(key, bytes, cap), node, attempts, credits };
}

/** Reads `stream` whole, or stops past `cap` bytes: the bytes, or the count that broke the cap. */
function readCapped(stream: UpstreamStream, cap: number): Promise<Buffer | number | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let over = false;
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        bytes += chunk.length;
        if (bytes > cap) {
          over = true;
          done(new Error('answer over the key cap'));
          return;
        }
        chunks.push(chunk);
        done();
      },
    });
    sink.on('error', () => undefined);
    sink.on('finish', () => resolve(Buffer.concat(chunks, bytes)));
    sink.on('close', () => {
      if (over) resolve(bytes);
      else if (!sink.writableFinished) resolve(undefined);
    });
    stream.pipeTo(sink);
  });
}

/** `result` as the key may have it: itself, or its refusal when bigger than `cap` bytes. */
export async function capAnswer(result: Answer, cap: number, key: string): Promise<RouteResult> {
  const body = result.body;
  if (Buffer.isBuffer(body))
    return body.length > cap ? refused(result, body.length, cap, key) : result;
  if (!(body instanceof UpstreamStream)) return result;
  const read = await readCapped(body, cap);
  // The upstream broke before the end: the stream says so (a 502, as when streamed).
  if (read === undefined) return result;
  if (typeof read === 'number') return refused(result, read, cap, key);
  return { ...result, body: read };
}
