import net from 'node:net';
import { Agent, Client, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockNode, startMockNodes, type MockNode } from './index.js';

let nodes: MockNode[] = [];
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await Promise.all(nodes.map((node) => node.close()));
  nodes = [];
});

async function start(options: Parameters<typeof startMockNode>[0]): Promise<MockNode> {
  const node = await startMockNode(options);
  nodes.push(node);
  return node;
}

function dispatcher(): Agent {
  agent ??= new Agent({ connections: 64 });
  return agent;
}

async function post(node: MockNode, body: unknown, path = '/') {
  const res = await request(`${node.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    dispatcher: dispatcher(),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const call = (method: string, id: unknown = 1, params?: unknown) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});

describe('mock node HTTP surface', () => {
  it('answers JSON-RPC on POST / and any other path with application/json', async () => {
    const node = await start({ name: 'a' });
    expect(node.url).toBe(`http://127.0.0.1:${node.port}`);
    for (const path of ['/', '/send-request', '/v2/key?api-key=x']) {
      const res = await post(node, call('getHealth', 'x'), path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(JSON.parse(res.text)).toEqual({ jsonrpc: '2.0', result: 'ok', id: 'x' });
    }
  });

  it('serves GET /health and GET /__stats; other methods get 405/404', async () => {
    const node = await start({ name: 'a' });
    await post(node, [call('getSlot', 1), call('getSlot', 2), call('eth_chainId', 3)]);
    const health = await request(`${node.url}/health`, { dispatcher: dispatcher() });
    expect(health.statusCode).toBe(200);
    expect(await health.body.json()).toEqual({ status: 'up' });
    const stats = await request(`${node.url}/__stats`, { dispatcher: dispatcher() });
    expect(await stats.body.json()).toMatchObject({
      requests: 1,
      byMethod: { getSlot: 2, eth_chainId: 1 },
    });
    const getRoot = await request(node.url, { dispatcher: dispatcher() });
    expect(getRoot.statusCode).toBe(405);
    await getRoot.body.dump();
    const getOther = await request(`${node.url}/nothing`, { dispatcher: dispatcher() });
    expect(getOther.statusCode).toBe(404);
    await getOther.body.dump();
    const postHealth = await post(node, '{}', '/health');
    expect(postHealth.status).toBe(405);
  });

  it('keeps connections alive and counts them', async () => {
    const node = await start({ name: 'a' });
    const client = new Client(node.url);
    try {
      for (let i = 0; i < 5; i++) {
        const res = await client.request({
          method: 'POST',
          path: '/',
          body: JSON.stringify(call('getSlot', i)),
        });
        expect(res.headers.connection).toBe('keep-alive');
        await res.body.text();
      }
    } finally {
      await client.close();
    }
    expect(node.stats()).toMatchObject({ requests: 5, connections: 1, inFlight: 0 });
  });

  it('waits delayMs (+ jitter) before answering', async () => {
    const node = await start({ name: 'a', delayMs: 60, jitterMs: 20 });
    const started = performance.now();
    await post(node, call('getSlot'));
    expect(performance.now() - started).toBeGreaterThanOrEqual(58);
  });

  it('counts concurrent delayed requests in inFlightPeak', async () => {
    // A delay no test outlasts, so all ten are in flight together however slowly they arrive;
    // closing the node then cuts them off.
    const node = await start({ name: 'a', delayMs: 30_000 });
    const posts = Array.from({ length: 10 }, (_, i) =>
      post(node, call('getSlot', i)).then(
        () => 'answered',
        () => 'cut off',
      ),
    );
    while (node.stats().inFlight < 10) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(node.stats()).toMatchObject({ requests: 10, inFlight: 10, inFlightPeak: 10 });
    await node.close();
    expect(await Promise.all(posts)).toEqual(Array(10).fill('cut off'));
    expect(node.stats()).toMatchObject({ requests: 10, inFlight: 0, inFlightPeak: 10 });
    node.resetStats();
    expect(node.stats()).toEqual({
      requests: 0,
      byMethod: {},
      inFlight: 0,
      inFlightPeak: 0,
      connections: 0,
      faults: 0,
      notifications: 0,
      errorsByMethod: {},
      accepted: 0,
      alreadyKnown: 0,
    });
  });

  it('pads answers to responseBytes (a 12 MB getProgramAccounts)', async () => {
    const node = await start({ name: 'a', responseBytes: 12_000_000 });
    const params = ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', { encoding: 'base64' }];
    for (const id of [1, 'second']) {
      const res = await post(node, call('getProgramAccounts', id, params));
      expect(Buffer.byteLength(res.text)).toBeGreaterThanOrEqual(12_000_000);
      const parsed = JSON.parse(res.text) as { result: unknown[]; id: unknown };
      expect(parsed.id).toBe(id);
      expect(parsed.result.length).toBeGreaterThan(1000);
    }
    const small = await post(node, call('getHealth', 9));
    expect(Buffer.byteLength(small.text)).toBe(12_000_000);
    node.setBehaviour({ responseBytes: 0 });
    expect((await post(node, call('getHealth', 9))).text).toBe(
      '{"jsonrpc":"2.0","result":"ok","id":9}',
    );
  });

  it('rejects bad behaviour with a RangeError naming the field', async () => {
    const node = await start({ name: 'a' });
    expect(() => node.setBehaviour({ failureRate: 2 })).toThrow(/failureRate/);
    expect(() => node.setBehaviour({ fault: { kind: 'http', status: 99 } })).toThrow(/status/);
    await expect(startMockNode({ name: 'b', delayMs: -1 })).rejects.toThrow(/delayMs/);
  });

  it('fails clearly when the port is taken, closing the nodes it started', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      await expect(
        startMockNodes([
          { name: 'free', port: 0 },
          { name: 'taken', port },
        ]),
      ).rejects.toThrow(`port ${port} is already in use`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('starts several nodes on distinct ports', async () => {
    const started = await startMockNodes([{ name: 'x' }, { name: 'y', delayMs: 5 }]);
    nodes.push(...started);
    expect(started.map((node) => node.name)).toEqual(['x', 'y']);
    expect(new Set(started.map((node) => node.port)).size).toBe(2);
    expect(started[1]!.behaviour().delayMs).toBe(5);
  });
});
