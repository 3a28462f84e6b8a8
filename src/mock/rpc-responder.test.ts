import { describe, expect, it } from 'vitest';
import { ChainClock } from './chain-clock.js';
import { MockMempool } from './mempool.js';
import { MOCK_METHODS, RpcResponder, parseBody, type ResponseBody } from './rpc-responder.js';
import { nodeMethodContext } from './transaction-intake.js';

const responder = new RpcResponder(
  nodeMethodContext('unit', new ChainClock(), new MockMempool(), () => 'geth', {
    accepted: 0,
    alreadyKnown: 0,
  }),
);

function text(body: ResponseBody): string {
  return typeof body === 'string'
    ? body
    : body.map((part) => (typeof part === 'string' ? part : part.toString('utf8'))).join('');
}

function answer(body: string, responseBytes = 0): string {
  return text(responder.answer(parseBody(body), responseBytes));
}

function answerJson(body: unknown, responseBytes = 0): unknown {
  return JSON.parse(answer(JSON.stringify(body), responseBytes));
}

describe('RpcResponder', () => {
  it.each([
    ['a number', 7],
    ['a string', 'req-1'],
    ['null', null],
    ['a large number', 9007199254740991],
  ])('echoes %s id', (_what, id) => {
    expect(answerJson({ jsonrpc: '2.0', id, method: 'getHealth' })).toEqual({
      jsonrpc: '2.0',
      result: 'ok',
      id,
    });
  });

  it('answers an unknown method with -32601 and the id', () => {
    expect(answerJson({ jsonrpc: '2.0', id: 3, method: 'getNothing' })).toEqual({
      jsonrpc: '2.0',
      error: { code: -32601, message: 'Method not found' },
      id: 3,
    });
  });

  it('answers a body that is not JSON with -32700 and id null', () => {
    expect(answer('{"jsonrpc":')).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}',
    );
  });

  it.each([
    ['a scalar', 42],
    ['an object without method', { jsonrpc: '2.0', id: 1 }],
    ['a non-string method', { jsonrpc: '2.0', id: 1, method: 5 }],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'getSlot' }],
    ['an empty batch', []],
  ])('answers %s with -32600', (_what, body) => {
    const parsed = answerJson(body) as { error: { code: number } };
    expect(parsed.error.code).toBe(-32600);
  });

  it('answers bad params with -32602', () => {
    const parsed = answerJson({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: [] }) as {
      error: { code: number };
      id: number;
    };
    expect(parsed).toMatchObject({ error: { code: -32602 }, id: 1 });
  });

  it('answers a batch in order, skipping notifications', () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'getHealth' },
      { jsonrpc: '2.0', method: 'getSlot' },
      { jsonrpc: '2.0', id: 'b', method: 'nope' },
      7,
    ];
    expect(answerJson(batch)).toEqual([
      { jsonrpc: '2.0', result: 'ok', id: 1 },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'b' },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null },
    ]);
  });

  it('owes nothing for notifications only', () => {
    expect(answer('{"jsonrpc":"2.0","method":"getSlot"}')).toBe('');
    expect(answer('[{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","method":"x"}]')).toBe(
      '',
    );
  });

  it.each(['getHealth', 'getSlot', 'eth_blockNumber'])(
    'pads %s with JSON whitespace to the requested size',
    (method) => {
      const body = answer(JSON.stringify({ jsonrpc: '2.0', id: 1, method }), 4096);
      expect(Buffer.byteLength(body)).toBe(4096);
      expect(JSON.parse(body)).toMatchObject({ id: 1 });
    },
  );

  it('pads getProgramAccounts with real accounts', () => {
    const call = {
      jsonrpc: '2.0',
      id: 'big',
      method: 'getProgramAccounts',
      params: ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', { encoding: 'base64' }],
    };
    const body = answer(JSON.stringify(call), 200_000);
    expect(Buffer.byteLength(body)).toBeGreaterThanOrEqual(200_000);
    expect(Buffer.byteLength(body)).toBeLessThan(204_000);
    const parsed = JSON.parse(body) as { result: Array<{ pubkey: string }>; id: string };
    expect(parsed.id).toBe('big');
    expect(parsed.result.length).toBeGreaterThan(50);
  });

  it('splits the padding between the elements of a batch', () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{}] },
    ];
    const body = answer(JSON.stringify(batch), 20_000);
    expect(Buffer.byteLength(body)).toBeGreaterThanOrEqual(19_000);
    expect(JSON.parse(body)).toHaveLength(2);
  });

  it('has every method the brief names', () => {
    const required = [
      'getHealth',
      'getSlot',
      'getBlockHeight',
      'getBalance',
      'getLatestBlockhash',
      'getAccountInfo',
      'getMultipleAccounts',
      'getProgramAccounts',
      'getSignaturesForAddress',
      'getTransaction',
      'getVersion',
      'getEpochInfo',
      'sendTransaction',
      'simulateTransaction',
      'getTokenAccountsByOwner',
      'getRecentPrioritizationFees',
      'getMinimumBalanceForRentExemption',
      'getGenesisHash',
      'getIdentity',
      'getBlockTime',
      'getFeeForMessage',
      'getSignatureStatuses',
      'isBlockhashValid',
      'eth_chainId',
      'eth_blockNumber',
      'eth_getBalance',
      'eth_call',
      'eth_getBlockByNumber',
      'eth_getTransactionReceipt',
      'eth_gasPrice',
      'eth_estimateGas',
      'eth_sendRawTransaction',
      'eth_getLogs',
      'eth_getTransactionCount',
      'eth_getCode',
      'eth_feeHistory',
      'eth_maxPriorityFeePerGas',
      'net_version',
      'web3_clientVersion',
    ];
    expect(required.filter((method) => !MOCK_METHODS.has(method))).toEqual([]);
  });

  it('moves the slot and block number with time', () => {
    let now = 1_000_000;
    const clock = new ChainClock(() => now);
    const slot = clock.slot();
    const block = clock.blockNumber();
    now += 12_000;
    expect(clock.slot()).toBe(slot + 30);
    expect(clock.blockNumber()).toBe(block + 1);
  });
});
