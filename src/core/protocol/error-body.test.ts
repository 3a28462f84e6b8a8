import { describe, expect, it } from 'vitest';
import { ERROR_MESSAGE, RPC_ERROR, errorBody, errorJson } from './error-body.js';

describe('errorJson', () => {
  it.each<[number, string, string, string]>([
    [
      RPC_ERROR.parseError,
      ERROR_MESSAGE.parseError,
      'null',
      '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}',
    ],
    [
      RPC_ERROR.serverError,
      ERROR_MESSAGE.allFailed,
      'null',
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"All nodes failed with server/network errors (no rate limits to wait for)"},"id":null}',
    ],
    [
      RPC_ERROR.serverError,
      ERROR_MESSAGE.globalTimeout,
      'null',
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Global timeout exceeded while retrying nodes"},"id":null}',
    ],
    [
      RPC_ERROR.invalidRequest,
      ERROR_MESSAGE.invalidRequest,
      '7',
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":7}',
    ],
  ])('writes code %d / %s with id %s byte for byte', (code, message, id, expected) => {
    expect(errorJson(code, message, id)).toBe(expected);
  });

  it('echoes a string id as JSON', () => {
    const text = errorJson(RPC_ERROR.parseError, 'Parse error', JSON.stringify('a"b'));
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: 'a"b',
    });
  });

  it('escapes the message', () => {
    expect(JSON.parse(errorJson(-32000, 'say "hi"\n', 'null')).error.message).toBe('say "hi"\n');
  });
});

describe('errorBody', () => {
  it('is errorJson as UTF-8 bytes', () => {
    const body = errorBody(-32000, 'naïve', '1');
    expect(body).toBeInstanceOf(Buffer);
    expect(body.toString('utf8')).toBe(errorJson(-32000, 'naïve', '1'));
  });
});
