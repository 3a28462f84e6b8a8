import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CallbackBodyReader, declaredOver, readBody } from './read-body.js';

/** Reads a body that arrives as `chunks` (one data event each) under `limit`. */
function bodyOf(
  chunks: string[],
  limit = 1024,
  contentLength?: string,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = Readable.from(
      chunks.map((chunk) => Buffer.from(chunk)),
      { objectMode: false },
    );
    const headers = contentLength === undefined ? {} : { 'content-length': contentLength };
    const reader = new CallbackBodyReader(limit, (body) => resolve(body?.toString()));
    readBody(req as unknown as IncomingMessage, reader, headers);
    // A read refused up front never listens: the stream is left unread.
  });
}

describe('readBody', () => {
  it('hands over a body of one chunk, of several, and an empty one, whole and in order', async () => {
    expect(await bodyOf(['{"a":1}'])).toBe('{"a":1}');
    expect(await bodyOf(['{"a"', ':', '1}'])).toBe('{"a":1}');
    expect(await bodyOf(['ab', 'cd', 'ef', 'gh', 'ij'])).toBe('abcdefghij');
    expect(await bodyOf([])).toBe('');
  });

  it('refuses a body over the limit once, as soon as the bytes pass it', async () => {
    let calls = 0;
    const body = await new Promise<Buffer | undefined>((resolve) => {
      const req = Readable.from([Buffer.from('12345'), Buffer.from('67890'), Buffer.from('x')]);
      const reader = new CallbackBodyReader(8, (read) => {
        calls++;
        resolve(read);
      });
      readBody(req as unknown as IncomingMessage, reader, {});
    });
    expect(body).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBe(1);
    // Exactly at the limit is taken.
    expect(await bodyOf(['1234', '5678'], 8)).toBe('12345678');
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    expect(await bodyOf(['whatever'], 4, '9')).toBeUndefined();
  });
});

describe('declaredOver', () => {
  it('agrees with Number(text) > limit for every digit text Node would pass', () => {
    const limits = [0, 1, 9, 10, 99, 100, 1024, 1_048_576, 10_000_000];
    const texts: string[] = [];
    for (let n = 0; n <= 1100; n++) texts.push(String(n));
    for (const limit of limits) {
      for (const delta of [-11, -10, -1, 0, 1, 10, 11]) {
        const n = limit + delta;
        if (n < 0) continue;
        texts.push(String(n), `0${n}`, `000${n}`);
      }
    }
    texts.push('', '0', '00000000000000000000001', '99999999999999999999');
    // Limits change between calls (two chains, a reload): each is judged by its own.
    for (const limit of limits) {
      for (const text of texts) expect(declaredOver(text, limit)).toBe(Number(text) > limit);
    }
  });
});
