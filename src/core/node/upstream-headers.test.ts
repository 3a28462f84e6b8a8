import { describe, expect, it } from 'vitest';
import { RawHeader, nodeRequestHeaders } from './upstream-headers.js';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('nodeRequestHeaders', () => {
  it('is the content type alone for a plain URL', () => {
    expect(nodeRequestHeaders(new URL('https://rpc.example/'), {})).toEqual({
      'content-type': 'application/json',
    });
  });

  it('turns URL credentials into Basic auth, percent-decoded as UTF-8', () => {
    const headers = nodeRequestHeaders(new URL('https://us%C3%A9r:p%40ss%3Aw@rpc.example/'), {});
    expect(headers.authorization).toBe(basic('usér:p@ss:w'));
  });

  it('keeps configured headers, and the content type always wins', () => {
    const headers = nodeRequestHeaders(new URL('https://rpc.example/'), {
      'x-api-key': 'k',
      'content-type': 'text/plain',
    });
    expect(headers).toEqual({ 'x-api-key': 'k', 'content-type': 'application/json' });
    expect(Object.isFrozen(headers)).toBe(true);
  });
});

describe('RawHeader', () => {
  const raw = (...pairs: string[]) => pairs.map((text) => Buffer.from(text, 'latin1'));

  it("reads a header's first value from undici's raw list, its name in any case", () => {
    const type = new RawHeader('content-type');
    expect(type.read(undefined)).toBeUndefined();
    expect(type.read(raw('Content-Length', '12', 'date', 'x'))).toBeUndefined();
    expect(type.read(raw('Content-Type', 'application/json', 'content-type', 'text/plain'))).toBe(
      'application/json',
    );
    expect(type.read(raw('CONTENT-TYPE', 'text/plain; charset=utf-8'))).toBe(
      'text/plain; charset=utf-8',
    );
    // A name of the same length that differs, and an empty value.
    expect(type.read(raw('content-typf', 'a'))).toBeUndefined();
    expect(type.read(raw('content-type', ''))).toBe('');
    expect(new RawHeader('retry-after').read(raw('Retry-After', '7'))).toBe('7');
  });

  it('gives the same text for a repeated value, and the new one when it changes', () => {
    const type = new RawHeader('content-type');
    const first = type.read(raw('content-type', 'application/json'));
    expect(type.read(raw('content-type', 'application/json'))).toBe(first);
    expect(type.read(raw('content-type', 'application/jsoN'))).toBe('application/jsoN');
    expect(type.read(raw('content-type', 'application/json;'))).toBe('application/json;');
    expect(type.read(raw('content-type', 'application/json'))).toBe('application/json');
  });

  it('keeps its own copy: a reused socket buffer does not change what was read', () => {
    const type = new RawHeader('content-type');
    const headers = raw('content-type', 'application/json');
    expect(type.read(headers)).toBe('application/json');
    headers[1]!.write('text/html;abcdef', 'latin1'); // undici's buffer, reused for another answer
    expect(type.read(headers)).toBe('text/html;abcdef');
    expect(type.read(raw('content-type', 'application/json'))).toBe('application/json');
  });
});
