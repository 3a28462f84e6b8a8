import { describe, expect, it } from 'vitest';
import { ATTEMPT_OUTCOMES } from '../metrics.js';
import {
  LOGS_LIMIT_ERROR,
  REQUEST_RPC_ERROR,
  classifyAnswer,
  isFinalStatus,
  retryAfterSeconds,
} from './classify.js';

const ok = (id = 1) => `{"jsonrpc":"2.0","result":"ok","id":${id}}`;
const rpcError = (code: number | string) =>
  `{"jsonrpc":"2.0","error":{"code":${code},"message":"x"},"id":1}`;
const big = (text: string) => text + ' '.repeat(600);

describe('classifyAnswer', () => {
  it.each([
    // [case, status, body, kind, penalty, outcome]
    ['2xx result', 200, ok(), 'success', 'never', 'success'],
    ['400 is the client’s fault', 400, 'bad', 'final', 'never', 'forwarded_http_error'],
    ['404 final', 404, '', 'final', 'never', 'forwarded_http_error'],
    ['413 final', 413, '', 'final', 'never', 'forwarded_http_error'],
    ['429 forwarded but penalized', 429, ok(), 'final', 'now', 'forwarded_http_error'],
    [
      '503 JSON body without error',
      503,
      '{"jsonrpc":"2.0","result":null,"id":1}',
      'final',
      'now',
      'forwarded_http_error',
    ],
    ['401 is a node problem', 401, '{"a":1}', 'final', 'now', 'forwarded_http_error'],
    ['5xx HTML small body', 502, '<html>bad gateway</html>', 'retry', 'now', 'invalid_json'],
    ['empty 2xx (204)', 204, '', 'retry', 'now', 'invalid_json'],
    ['array answer to a single request', 200, '[1,2]', 'retry', 'now', 'invalid_json'],
    ['scalar answer', 200, '42', 'retry', 'now', 'invalid_json'],
    ['trailing garbage', 200, `${ok()}x`, 'retry', 'now', 'invalid_json'],
    [
      'error without integer code',
      200,
      '{"error":{"code":"-32000"}}',
      'retry',
      'now',
      'invalid_json',
    ],
    ['error that is a string', 200, '{"error":"boom"}', 'retry', 'now', 'invalid_json'],
    ['-32700 is the client’s', 200, rpcError(-32700), 'final', 'never', 'forwarded_rpc_error'],
    ['-32600 is the client’s', 200, rpcError(-32600), 'final', 'never', 'forwarded_rpc_error'],
    ['-32601 is the client’s', 200, rpcError(-32601), 'final', 'never', 'forwarded_rpc_error'],
    ['-32602 is the client’s', 200, rpcError(-32602), 'final', 'never', 'forwarded_rpc_error'],
    [
      'unknown -32000 is disputed',
      200,
      rpcError(-32000),
      'retry',
      'disputed',
      'retryable_rpc_error',
    ],
    [
      'unknown -32603 is disputed',
      200,
      rpcError(-32603),
      'retry',
      'disputed',
      'retryable_rpc_error',
    ],
    [
      '-32005 without a known message is disputed',
      200,
      rpcError(-32005),
      'retry',
      'disputed',
      'retryable_rpc_error',
    ],
    ['code 0 is disputed', 200, rpcError(0), 'retry', 'disputed', 'retryable_rpc_error'],
    [
      'error null is no error',
      200,
      '{"jsonrpc":"2.0","result":1,"error":null,"id":1}',
      'success',
      'never',
      'success',
    ],
    ['large 2xx non-JSON is never parsed', 200, big('not json'), 'success', 'never', 'success'],
    [
      'large 5xx non-JSON without "error" forwards + penalizes',
      500,
      big('<html>oops</html>'),
      'final',
      'now',
      'forwarded_http_error',
    ],
    [
      'large body with "error" is parsed',
      200,
      big(rpcError(-32000)),
      'retry',
      'disputed',
      'retryable_rpc_error',
    ],
    [
      'large body with "error" that is not JSON',
      200,
      big('"error" <html>'),
      'retry',
      'now',
      'invalid_json',
    ],
  ] as const)('%s', (_name, status, body, kind, penalty, outcome) => {
    const verdict = classifyAnswer(status, Buffer.from(body), false);
    expect(verdict.kind).toBe(kind);
    expect(verdict.penalty).toBe(penalty);
    expect(ATTEMPT_OUTCOMES[verdict.outcome]).toBe(outcome);
  });

  it('accepts an array answer when the request was a batch', () => {
    expect(classifyAnswer(200, Buffer.from(`[${ok(1)},${ok(2)}]`), true).kind).toBe('success');
  });
});

describe('isFinalStatus', () => {
  it('is exactly 400, 402, 404–418, 421–426, 428, 431, 451', () => {
    const finals = [];
    for (let status = 100; status < 600; status++) if (isFinalStatus(status)) finals.push(status);
    const expected = [400, 402];
    for (let s = 404; s <= 418; s++) expected.push(s);
    for (let s = 421; s <= 426; s++) expected.push(s);
    expected.push(428, 431, 451);
    expect(finals).toEqual(expected);
  });
});

describe('retryAfterSeconds', () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  it.each([
    [429, '7', 7],
    [429, ' 30 ', 30],
    [503, '12', 12],
    [429, 'Wed, 02 Dec 2026 12:01:00 GMT', 60],
    [503, 'Wed, 02 Dec 2026 11:00:00 GMT', 0],
    [429, '-5', 0],
    [429, '1.5', 0],
    [429, 'soon', 0],
    [500, '60', 0],
    [200, '60', 0],
  ] as const)('status %i, Retry-After %j → %i s', (status, header, expected) => {
    expect(retryAfterSeconds(status, header, now)).toBe(expected);
  });

  it('is 0 without the header', () => {
    expect(retryAfterSeconds(429, undefined, now)).toBe(0);
  });
});

describe('classifyAnswer: eth_getLogs limits (issue 29)', () => {
  const error = (code: number, message: string) =>
    Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } }));

  it('retries a range or result limit elsewhere with no penalty, whatever its code or status', () => {
    const alchemy = error(
      -32600,
      'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x1, 0x1f4]',
    );
    const quicknode = error(-32614, 'eth_getLogs is limited to a 10,000 range');
    for (const [status, body] of [
      [200, alchemy],
      [400, alchemy],
      [413, quicknode],
      [200, error(-32602, 'range 1000000 exceeds limit of 10000')],
      [200, error(-32000, 'query returned more than 10000 results')],
    ] as const) {
      const verdict = classifyAnswer(status, body, false);
      expect(verdict, body.toString()).toBe(LOGS_LIMIT_ERROR);
      expect(verdict).toMatchObject({ kind: 'retry', penalty: 'never', relayable: true });
    }
  });

  it('leaves the client codes and final statuses alone otherwise', () => {
    expect(classifyAnswer(200, error(-32600, 'Invalid Request'), false)).toBe(REQUEST_RPC_ERROR);
    expect(classifyAnswer(413, error(-32600, 'too big'), false).kind).toBe('final');
    expect(classifyAnswer(413, Buffer.from('<html>too big</html>'), false).kind).toBe('final');
  });
});
