import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { acceptsGzip } from './compression.js';

const request = (acceptEncoding?: string) =>
  ({
    headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
  }) as IncomingMessage;

describe('acceptsGzip', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['gzip, deflate, br, zstd', true],
    ['GZip', true],
    ['*', true],
    ['br;q=1, gzip;q=0.5', true],
    ['identity;q=1, gzip;q=0.5', false],
    ['gzip;q=0', false],
    ['*;q=0', false],
    ['deflate, br', false],
  ])('Accept-Encoding %j → %s', (header, expected) => {
    expect(acceptsGzip(request(header))).toBe(expected);
  });
});
