import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockNode, type MockNode, type MockNodeOptions } from '../src/mock/index.js';
import { methodOf, startReferenceProxy, type ReferenceProxy } from './reference-proxy.js';

let nodes: MockNode[] = [];
let proxy: ReferenceProxy | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await proxy?.close();
  proxy = undefined;
  await Promise.all(nodes.map((node) => node.close()));
  nodes = [];
});

async function startNodes(...options: MockNodeOptions[]): Promise<MockNode[]> {
  nodes = await Promise.all(options.map((o) => startMockNode(o)));
  return nodes;
}

async function post(url: string, body: string) {
  agent ??= new Agent();
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    dispatcher: agent,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

describe('reference proxy', () => {
  it('forwards a request to a mock node and passes its status and body back', async () => {
    const [node] = await startNodes({ name: 'a' });
    proxy = await startReferenceProxy({ upstreams: [node!.url] });
    const body = '{"jsonrpc":"2.0","id":7,"method":"getHealth"}';
    const res = await post(proxy.url, body);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe((await post(node!.url, body)).text);
    expect(JSON.parse(res.text)).toEqual({ jsonrpc: '2.0', result: 'ok', id: 7 });
  });

  it('passes an upstream error status, content-type and body through verbatim', async () => {
    const fault = { kind: 'http', status: 503, body: 'down for maintenance' } as const;
    const [node] = await startNodes({ name: 'a', fault });
    proxy = await startReferenceProxy({ upstreams: [node!.url] });
    const res = await post(proxy.url, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('down for maintenance');
  });

  it('round-robins over its upstreams', async () => {
    const [a, b] = await startNodes({ name: 'a' }, { name: 'b' });
    proxy = await startReferenceProxy({ upstreams: [a!.url, b!.url] });
    for (let i = 0; i < 4; i++) await post(proxy.url, `{"method":"getSlot","id":${i}}`);
    expect([a!.stats().requests, b!.stats().requests]).toEqual([2, 2]);
  });

  it('answers 400 to a body without a method and 502 when the upstream is gone', async () => {
    const [node] = await startNodes({ name: 'a' });
    const url = node!.url;
    proxy = await startReferenceProxy({ upstreams: [url] });
    expect((await post(proxy.url, 'not json')).status).toBe(400);
    await node!.close();
    nodes = [];
    expect((await post(proxy.url, '{"method":"getSlot","id":1}')).status).toBe(502);
  });
});

describe('methodOf', () => {
  it.each([
    ['{"method":"getSlot","id":1}', 'getSlot'],
    [' { "method" : "getBalance" , "params":[] }', 'getBalance'],
    ['{"id":1,"method":"getSlot"}', 'getSlot'],
    ['[{"method":"getSlot"},{"method":"getBalance"}]', 'getSlot'],
    ['{"method":"a","method":"b"}', 'b'],
    ['{"method":"get\\u0053lot"}', 'getSlot'],
    ['{"id":1}', undefined],
    ['{"method":', undefined],
  ])('%s → %s', (body, method) => {
    expect(methodOf(Buffer.from(body))).toBe(method);
  });
});
