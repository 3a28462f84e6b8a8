/** Per-method errors and rpc_error data, at the node's HTTP surface. */
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeError, startMockNode, type MockNode, type MockNodeOptions } from './index.js';

let node: MockNode | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await node?.close();
  node = undefined;
});

async function start(options: Omit<MockNodeOptions, 'name'>): Promise<MockNode> {
  node = await startMockNode({ name: 'errors', ...options });
  return node;
}

async function post(target: MockNode, body: string) {
  agent ??= new Agent({ connections: 8 });
  const res = await request(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    dispatcher: agent,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const call = (method: string, id: number | string = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params: [] });

describe('methodErrors', () => {
  it('answers only the configured method with the error, byte for byte', async () => {
    const target = await start({
      methodErrors: { eth_call: 'geth.revert:Ownable: caller is not the owner' },
    });
    const reverted = await post(target, call('eth_call', 7));
    expect(reverted.status).toBe(200);
    const error = nodeError('geth.revert', 'Ownable: caller is not the owner');
    expect(reverted.text).toBe(
      `{"jsonrpc":"2.0","error":{"code":3,"message":"execution reverted: Ownable: caller is not the owner","data":"${String(error.data)}"},"id":7}`,
    );
    expect(JSON.parse((await post(target, call('eth_chainId'))).text)).toEqual({
      jsonrpc: '2.0',
      result: '0x1',
      id: 1,
    });
    expect(target.stats().errorsByMethod).toEqual({ eth_call: 1 });
  });

  it('answers the method inside batches too, the other elements normally', async () => {
    const target = await start({
      methodErrors: { sendTransaction: 'solana.custom_program_error' },
    });
    const body = `[${call('getSlot', 1)},${call('sendTransaction', 2)},${call('getHealth', 3)}]`;
    const answer = JSON.parse((await post(target, body)).text) as Array<Record<string, unknown>>;
    expect(answer.map((entry) => entry.id)).toEqual([1, 2, 3]);
    expect(answer[0]).toHaveProperty('result');
    expect(answer[1]).toEqual({
      jsonrpc: '2.0',
      error: JSON.parse(JSON.stringify(nodeError('solana.custom_program_error'))) as unknown,
      id: 2,
    });
    expect(answer[2]).toMatchObject({ result: 'ok' });
  });

  it("sends a provider's rate limit with its HTTP status for a single call", async () => {
    const target = await start({
      methodErrors: {
        getBalance: 'alchemy.rate_limit',
        eth_getLogs: {
          code: -32005,
          message: 'limited',
          status: 429,
          headers: { 'retry-after': '3' },
        },
      },
    });
    const limited = await post(target, call('getBalance'));
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.text)).toMatchObject({ error: { code: 429 }, id: 1 });
    const withHeader = await post(target, call('eth_getLogs'));
    expect(withHeader.status).toBe(429);
    expect(withHeader.headers['retry-after']).toBe('3');
    // Inside a batch the element carries the error and the batch answers 200.
    const batch = await post(target, `[${call('getBalance')}]`);
    expect(batch.status).toBe(200);
  });

  it('is replaced with setBehaviour and cleared with {}', async () => {
    const target = await start({ methodErrors: { getSlot: 'solana.node_unhealthy' } });
    expect(JSON.parse((await post(target, call('getSlot'))).text)).toMatchObject({
      error: { code: -32005, message: 'Node is unhealthy', data: { numSlotsBehind: null } },
    });
    target.setBehaviour({
      methodErrors: { getSlot: { code: -32099, message: 'custom', data: [1, 'x'] } },
    });
    expect(JSON.parse((await post(target, call('getSlot'))).text)).toMatchObject({
      error: { code: -32099, message: 'custom', data: [1, 'x'] },
    });
    target.setBehaviour({ methodErrors: {} });
    expect(JSON.parse((await post(target, call('getSlot'))).text)).toHaveProperty('result');
    expect(() => target.setBehaviour({ methodErrors: { getSlot: 'geth.nope' } })).toThrow(
      /methodErrors\["getSlot"\]: unknown node error preset "geth.nope"; presets: /,
    );
    expect(target.behaviour().methodErrors).toEqual({});
  });

  it('does not answer notifications, even of an erroring method', async () => {
    const target = await start({ methodErrors: { eth_call: 'geth.revert' } });
    const answer = await post(target, '{"jsonrpc":"2.0","method":"eth_call"}');
    expect(answer).toMatchObject({ status: 200, text: '' });
    expect(target.stats()).toMatchObject({ notifications: 1, errorsByMethod: {} });
  });
});

describe('rpc_error fault', () => {
  it('carries any JSON data and echoes the id', async () => {
    const target = await start({
      fault: {
        kind: 'rpc_error',
        code: -32000,
        message: 'header not found',
        data: { block: '0x10' },
      },
    });
    expect((await post(target, call('eth_getBlockByNumber', 'q'))).text).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"header not found","data":{"block":"0x10"}},"id":"q"}',
    );
  });

  it('refuses data that is not JSON', async () => {
    await expect(start({ fault: { kind: 'rpc_error', code: -32000, data: 10n } })).rejects.toThrow(
      /fault\.data/,
    );
  });
});
