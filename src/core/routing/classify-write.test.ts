import { describe, expect, it } from 'vitest';
import { ALREADY_KNOWN as CLIENT_ALREADY_KNOWN } from '../../mock/evm-errors.js';
import { ALREADY_PROCESSED } from '../../mock/solana-errors.js';
import {
  ALREADY_KNOWN,
  REQUEST_RPC_ERROR,
  SUCCESS,
  TRANSPORT_ERROR,
  WRITE_REFUSED,
  WRITE_THROTTLED,
  NODE_RPC_ERROR,
  classifySingle,
  classifyWrite,
} from './classify.js';

const request = {
  body: Buffer.from('{}'),
  method: 'x',
  methodId: 0,
  batch: undefined,
  idText: '1',
};

function errorAnswer(error: { code: number; message: string; data?: unknown }): Buffer {
  return Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, error }));
}

describe('classifyWrite', () => {
  it.each([
    ...Object.entries(CLIENT_ALREADY_KNOWN).map(([client, error]) => [client, error] as const),
    ['agave', ALREADY_PROCESSED] as const,
  ])(
    "tells %s's already-known answer apart (a read sees the same as the request's error)",
    (_c, error) => {
      const body = errorAnswer(error);
      expect(classifyWrite(200, body, request)).toBe(ALREADY_KNOWN);
      expect(classifySingle(200, body, request)).toBe(REQUEST_RPC_ERROR);
    },
  );

  it.each([429, 503])('sends a write refused with HTTP %i to another node', (status) => {
    expect(classifyWrite(status, Buffer.from('busy'), request)).toBe(WRITE_REFUSED);
  });

  it('sends a throttled write to another node; an unhealthy node keeps its answer', () => {
    const throttled = errorAnswer({
      code: -32005,
      message: 'Too many requests for a specific RPC call',
    });
    expect(classifyWrite(200, throttled, request)).toBe(WRITE_THROTTLED);
    const unhealthy = errorAnswer({ code: -32005, message: 'Node is behind by 42 slots' });
    expect(classifyWrite(200, unhealthy, request)).toBe(NODE_RPC_ERROR);
  });

  it('relays a 500 and a nonce error as a read would, and accepts a result', () => {
    for (const body of ['oops', '{"jsonrpc":"2.0","id":1,"result":null}']) {
      expect(classifyWrite(500, Buffer.from(body), request)).toBe(
        classifySingle(500, Buffer.from(body), request),
      );
    }
    const nonce = errorAnswer({ code: -32000, message: 'nonce too low: next nonce 5, tx nonce 3' });
    expect(classifyWrite(200, nonce, request)).toBe(REQUEST_RPC_ERROR);
    expect(
      classifyWrite(200, Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0xab"}'), request),
    ).toBe(SUCCESS);
    expect(TRANSPORT_ERROR.kind).toBe('retry');
  });
});
