/** Ids echoed byte for byte and notifications answered with nothing, at the HTTP surface. */
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockNode, type MockNode, type MockNodeOptions } from './index.js';

let node: MockNode | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await node?.close();
  node = undefined;
});

async function start(options: Omit<MockNodeOptions, 'name'> = {}): Promise<MockNode> {
  node = await startMockNode({ name: 'ids', ...options });
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

/** Ids as JSON text a client may send, each of which JSON.parse + JSON.stringify would change. */
const ODD_IDS = [
  '12345678901234567890',
  '1.50',
  '-0',
  '1e3',
  '0.1000000000000000055511151231257827',
  '"\\u0041b"',
  '"tab\\there"',
  '"é/\\/"',
];

describe('ids', () => {
  it.each(ODD_IDS)('echoes %s exactly in a single answer', async (idJson) => {
    const target = await start();
    const ok = await post(target, `{"jsonrpc":"2.0","id" : ${idJson} ,"method":"getHealth"}`);
    expect(ok.text).toBe(`{"jsonrpc":"2.0","result":"ok","id":${idJson}}`);
    const missing = await post(target, `{"id":${idJson},"jsonrpc":"2.0","method":"nope"}`);
    expect(missing.text).toBe(
      `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":${idJson}}`,
    );
  });

  it('echoes every element id exactly in a batch', async () => {
    const target = await start();
    const body = `[${ODD_IDS.map((id) => `{"jsonrpc":"2.0","method":"getHealth","id":${id}}`).join(' , ')}]`;
    const answer = await post(target, body);
    expect(answer.text).toBe(
      `[${ODD_IDS.map((id) => `{"jsonrpc":"2.0","result":"ok","id":${id}}`).join(',')}]`,
    );
  });

  it('echoes the exact id in method errors and rpc_error faults', async () => {
    const target = await start({ methodErrors: { eth_call: 'geth.already_known' } });
    expect(
      (await post(target, '{"jsonrpc":"2.0","id":12345678901234567891,"method":"eth_call"}')).text,
    ).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"already known"},"id":12345678901234567891}',
    );
    target.setBehaviour({ fault: { kind: 'rpc_error', code: -32005 } });
    expect((await post(target, '{"jsonrpc":"2.0","id":2.50,"method":"getSlot"}')).text).toBe(
      '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Request limit exceeded"},"id":2.50}',
    );
  });

  it('falls back to the parsed id when the member name is escaped or repeated', async () => {
    const target = await start();
    expect((await post(target, '{"jsonrpc":"2.0","\\u0069d":7,"method":"getHealth"}')).text).toBe(
      '{"jsonrpc":"2.0","result":"ok","id":7}',
    );
    expect(
      (await post(target, '{"jsonrpc":"2.0","id":1,"id":2.0,"method":"getHealth"}')).text,
    ).toBe('{"jsonrpc":"2.0","result":"ok","id":2}');
  });
});

describe('notifications (no id member)', () => {
  it('answer 200 with an empty body, like geth and agave', async () => {
    const target = await start();
    const answer = await post(target, '{"jsonrpc":"2.0","method":"getSlot"}');
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('');
    expect(answer.headers['content-length']).toBe('0');
    expect(target.stats()).toMatchObject({
      requests: 1,
      notifications: 1,
      byMethod: { getSlot: 1 },
    });
  });

  it('a batch of notifications only is answered 200 with an empty body', async () => {
    const target = await start();
    const answer = await post(
      target,
      '[{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","method":"nope","params":[]}]',
    );
    expect(answer).toMatchObject({ status: 200, text: '' });
    expect(target.stats()).toMatchObject({ notifications: 2, errorsByMethod: {} });
  });

  it('a mixed batch answers only the elements with ids', async () => {
    const target = await start();
    const answer = await post(
      target,
      '[{"jsonrpc":"2.0","method":"getSlot"},{"jsonrpc":"2.0","method":"getHealth","id":null},{"jsonrpc":"2.0","method":"nope","id":"x"}]',
    );
    expect(JSON.parse(answer.text)).toEqual([
      { jsonrpc: '2.0', result: 'ok', id: null },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 'x' },
    ]);
    expect(target.stats()).toMatchObject({ notifications: 1, errorsByMethod: { nope: 1 } });
  });
});
