import { describe, expect, it } from 'vitest';
import type { WsTestClient } from '../support/ws-client.js';
import { until } from '../support/ws-client.js';
import { useWsHarness } from '../support/ws-harness.js';

const ws = useWsHarness();
const open = (url?: string): Promise<WsTestClient> => ws.open(url);

describe('JSON-RPC over WebSocket', () => {
  it('routes a request like HTTP and answers with the client id, byte for byte', async () => {
    await ws.start([{ name: 'a', prices: { getSlot: 3 } }]);
    const client = await open();
    client.send('{"jsonrpc":"2.0","id":12345678901234567890,"method":"getSlot"}');
    const raw = await new Promise<string>((resolve) =>
      client.ws.once('message', (d: Buffer) => resolve(d.toString())),
    );
    expect(raw).toMatch(/"id":12345678901234567890}$/);
    expect(ws.harness.mocks.a!.stats().byMethod.getSlot).toBe(1);
    expect(ws.harness.cascade.server.nodes()).toHaveLength(1);
    // close() is idempotent: the afterEach's second call returns the same summary.
    expect((await ws.harness.cascade.close()).usage.a).toBe(3);
  });

  it('answers keep-alives locally: never forwarded, never billed', async () => {
    await ws.start([{ name: 'a' }]);
    const client = await open();
    client.send({ jsonrpc: '2.0', method: 'ping' });
    client.send({ jsonrpc: '2.0', id: null, method: 'net_version', params: [] });
    expect(await client.call('getHealth')).toMatchObject({ result: 'ok' });
    expect(client.messages).toEqual([]);
    expect(ws.harness.mocks.a!.stats().byMethod).toEqual({ getHealth: 1 });
  });

  it('never takes a batch for a keep-alive, whatever its first element', async () => {
    await ws.start([{ name: 'a' }]);
    const client = await open();
    for (const first of [
      { jsonrpc: '2.0', id: 5, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'net_version' },
    ]) {
      client.send([first, { jsonrpc: '2.0', id: 6, method: 'getSlot' }]);
      const batch = (await client.take(Array.isArray)) as unknown as Array<{
        id: number | null;
        result?: unknown;
      }>;
      // One answer per element, in place, under each element's own id (as an HTTP batch).
      expect(batch.map((one) => one.id)).toEqual([first.id, 6]);
      expect(batch[1]!.result).toEqual(expect.any(Number));
    }
  });

  it('refuses a batch holding a subscribe element by element, each under its own id', async () => {
    await ws.start([{ name: 'a' }]);
    const client = await open();
    client.send([
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 'two', method: 'slotSubscribe' },
      { jsonrpc: '2.0', method: 'getSlot' },
    ]);
    const batch = (await client.take(Array.isArray)) as unknown as Array<{
      id: unknown;
      error: { code: number; message: string };
    }>;
    expect(batch.map((one) => one.id)).toEqual([1, 'two']);
    for (const one of batch) {
      expect(one.error).toEqual({
        code: -32600,
        message: 'Subscribe and unsubscribe calls cannot be batched; send each as its own message',
      });
    }
    expect(ws.harness.mocks.a!.stats().requests).toBe(0);
  });

  it('answers a parse error with -32700 and a batch element by element', async () => {
    await ws.start([{ name: 'a' }]);
    const client = await open();
    client.send('{"jsonrpc":');
    expect(await client.take(() => true)).toMatchObject({ error: { code: -32700 }, id: null });
    client.send([
      { jsonrpc: '2.0', id: 1, method: 'getSlot' },
      { jsonrpc: '2.0', id: 2, method: 'getHealth' },
    ]);
    const batch = (await client.take(() => true)) as unknown as Array<{ id: number }>;
    expect(batch.map((one) => one.id)).toEqual([1, 2]);
  });
});

describe('subscriptions', () => {
  it('fans one upstream slotSubscribe out to 50 clients, with cascade ids, answer first', async () => {
    await ws.start([{ name: 'a' }, { name: 'b', tier: 1 }]);
    const many = await Promise.all(Array.from({ length: 50 }, () => open()));
    const answers = await Promise.all(many.map((client) => client.call('slotSubscribe')));
    const id = answers[0]!.result as number;
    expect(Number.isInteger(id)).toBe(true);
    for (const answer of answers) expect(answer.result).toBe(id);
    expect(ws.harness.mocks.a!.ws.stats().subscribes).toEqual({ slotSubscribe: 1 });
    expect(ws.harness.mocks.b!.ws.stats().subscribes).toEqual({});
    ws.harness.chain.advanceSlots(2);
    for (const client of many) {
      const notes = await client.notifications(id, 2);
      expect(notes[1]!.params.result.slot).toBe(notes[0]!.params.result.slot + 1);
      expect(notes[0]!.method).toBe('slotNotification');
    }
    expect(ws.harness.cascade.ws.hub.counts()).toEqual({ shared: 1, clients: 50, upstream: 1 });
  });

  it('unsubscribes upstream when the last client leaves, answering unsubscribe locally', async () => {
    await ws.start([{ name: 'a' }]);
    const [one, two] = await Promise.all([open(), open()]);
    const { result: id } = await one.call('rootSubscribe');
    await two.call('rootSubscribe');
    expect(await one.call('rootUnsubscribe', [id])).toMatchObject({ result: true });
    expect(await one.call('rootUnsubscribe', [id])).toMatchObject({
      error: { code: -32602, message: 'Invalid subscription id.' },
    });
    expect(ws.harness.mocks.a!.ws.stats().unsubscribes).toBe(0);
    expect(await two.call('rootUnsubscribe', [id])).toMatchObject({ result: true });
    await until(() => ws.harness.mocks.a!.ws.stats().subscriptions === 0);
    expect(ws.harness.mocks.a!.ws.stats().unsubscribes).toBe(1);
    expect(ws.harness.cascade.ws.hub.counts()).toEqual({ shared: 0, clients: 0, upstream: 0 });
  });

  it('gives EVM subscriptions hex ids written the same in every message', async () => {
    await ws.start([{ name: 'a' }]);
    const client = await open();
    const { result: id } = await client.call('eth_subscribe', ['newHeads']);
    expect(id).toMatch(/^0x[0-9a-f]{32}$/);
    ws.harness.chain.advanceBlocks(1);
    const [note] = await client.notifications(id, 1);
    expect(note).toMatchObject({
      jsonrpc: '2.0',
      method: 'eth_subscription',
      params: { subscription: id },
    });
    expect(await client.call('eth_subscribe', ['bogus'])).toMatchObject({
      error: { code: -32601 },
    });
  });

  it('relays a subscribe error the request caused, and tries the next node on a refusal', async () => {
    await ws.start([{ name: 'a' }, { name: 'b', tier: 1 }]);
    const client = await open();
    expect(await client.call('accountSubscribe', ['not-a-key'])).toMatchObject({
      error: { code: -32602 },
    });
    ws.harness.mocks.a!.ws.setFault({ kind: 'refuse_subscribe' });
    const { result } = await client.call('slotSubscribe');
    expect(typeof result).toBe('number');
    expect(ws.harness.mocks.b!.ws.stats().subscriptions).toBe(1);
  });
});

describe('provider credentials on the upstream socket', () => {
  it('sends the node headers and the URL user:password (Basic, percent-decoded) on the upgrade', async () => {
    await ws.start([
      { name: 'a', userinfo: 'user:p%40ss%20w%C3%B6rd', headers: { 'x-api-key': 'k-123' } },
    ]);
    const client = await open();
    await client.call('slotSubscribe');
    const [upgrade] = ws.harness.mocks.a!.ws.upgradeHeaders();
    const basic = Buffer.from('user:p@ss wörd', 'utf8').toString('base64');
    expect(upgrade).toMatchObject({ authorization: `Basic ${basic}`, 'x-api-key': 'k-123' });
    // The HTTP side carries the same credentials (the same node, the same style).
    expect(await client.call('getHealth')).toMatchObject({ result: 'ok' });
  });
});

describe('price lists without WebSocket prices', () => {
  it('say so in the error answer: no [websocket] table, no subscription there', async () => {
    await ws.start([{ name: 'a', ws: null }]);
    const client = await open();
    expect(await client.call('slotSubscribe')).toMatchObject({
      error: { code: -32000, message: expect.stringContaining('[websocket] table') },
    });
    expect(ws.harness.mocks.a!.ws.stats().accepted).toBe(0);
    // Plain requests over the socket still route as HTTP ones do.
    expect(await client.call('getHealth')).toMatchObject({ result: 'ok' });
  });
});
