import { describe, expect, it } from 'vitest';
import { nodeRequestHeaders } from './http-transport.js';

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
