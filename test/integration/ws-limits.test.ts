import { afterEach, describe, expect, it } from 'vitest';
import { WsTestClient, until } from '../support/ws-client.js';
import { startWsHarness, type WsHarness } from '../support/ws-harness.js';

let harness: WsHarness | undefined;
const clients: WsTestClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await harness?.close();
  harness = undefined;
});

async function open(url = harness!.wsUrl): Promise<WsTestClient> {
  const client = await WsTestClient.open(url);
  clients.push(client);
  return client;
}

/** A base58 pubkey-looking key, unique per `i`. */
function keyOf(i: number): string {
  return `Acc${String(i).replace(/\d/g, (d) => 'ABCDEFGHJK'[Number(d)]!)}`.padEnd(44, 'x');
}

describe('per-client limits', () => {
  it('refuses a connection over the per-IP limit with 429 and takes it again once one closes', async () => {
    harness = await startWsHarness([{ name: 'a' }], { server: { wsMaxConnectionsPerIp: 2 } });
    const first = await open();
    await open();
    await expect(WsTestClient.open(harness.wsUrl)).rejects.toThrow('HTTP 429');
    first.close();
    await until(() => harness!.cascade.ws.entries().sessions === 1);
    await until(() => harness!.cascade.ws.entries().ips === 1);
    await open();
  });

  it('answers a subscribe over the per-connection limit with an error, not a close', async () => {
    harness = await startWsHarness([{ name: 'a' }], {
      server: { wsMaxSubscriptionsPerConnection: 100 },
    });
    const client = await open();
    const answers = await Promise.all(
      Array.from({ length: 101 }, (_, i) => client.call('accountSubscribe', [keyOf(i)])),
    );
    expect(answers.filter((answer) => 'result' in answer)).toHaveLength(100);
    expect(answers[100]).toMatchObject({
      error: {
        code: -32005,
        message: expect.stringContaining('ws_max_subscriptions_per_connection'),
      },
    });
    expect(await client.call('getHealth')).toMatchObject({ result: 'ok' });
  });

  it('answers messages over the per-connection rate with an error', async () => {
    harness = await startWsHarness([{ name: 'a' }], { server: { wsMaxMessagesPerSecond: 5 } });
    const client = await open();
    // The clock does not move between these: the bucket (burst 5) has no sixth token.
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.call('getHealth')));
    expect(answers.filter((answer) => answer.error?.code === -32005)).not.toHaveLength(0);
  });

  it('closes a connection whose message is over max_body_bytes with 1009', async () => {
    harness = await startWsHarness([{ name: 'a' }], { server: { maxBodyBytes: 1024 } });
    const client = await open();
    client.send({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: ['x'.repeat(2000)] });
    expect((await client.closed).code).toBe(1009);
  });

  it('closes a client that stops reading with 1008', async () => {
    harness = await startWsHarness([{ name: 'a' }], { server: { wsMaxBufferedBytes: 64 * 1024 } });
    const client = await open();
    const key = keyOf(1);
    const { result: id } = await client.call('accountSubscribe', [key, { encoding: 'base64' }]);
    client.ws.pause();
    const data = new Uint8Array(256 * 1024);
    for (let i = 0; i < 200 && harness.cascade.ws.snapshot().slowClientCloses === 0; i++) {
      harness.chain.setAccount(key, { data, lamports: i });
      await new Promise((resolve) => setImmediate(resolve));
    }
    client.ws.resume();
    expect((await client.closed).code).toBe(1008);
    expect(id).toBeTypeOf('number');
    expect(await harness.metrics()).toContain('cascade_ws_slow_client_closes_total 1');
  });

  it('leaves no subscription and no map entry behind after 1,000 abrupt disconnects', async () => {
    // Setting up 1,000 sockets in one process blocks the loop for a while: no stall checks then.
    harness = await startWsHarness([{ name: 'a' }], {
      server: { wsMaxConnectionsPerIp: 2000 },
      tuning: { pingIntervalMs: 60_000 },
    });
    const many = await Promise.all(
      Array.from({ length: 1000 }, () => WsTestClient.open(harness!.wsUrl)),
    );
    await Promise.all(
      many.map(async (client, i) => {
        await client.call('slotSubscribe');
        await client.call('accountSubscribe', [keyOf(i % 250)]);
      }),
    );
    expect(harness.cascade.ws.hub.counts()).toEqual({ shared: 251, clients: 2000, upstream: 251 });
    for (const client of many) client.ws.terminate();
    await until(() => harness!.mocks.a!.ws.stats().subscriptions === 0);
    await until(() => harness!.cascade.ws.entries().sessions === 0);
    expect(harness.cascade.ws.hub.counts()).toEqual({ shared: 0, clients: 0, upstream: 0 });
    expect(harness.cascade.ws.entries()).toEqual({ sessions: 0, ips: 0 });
    expect(harness.mocks.a!.ws.stats().unsubscribes).toBe(251);
    expect([...harness.cascade.ws.hub.pool.sockets()].every((socket) => socket.load === 0)).toBe(
      true,
    );
  });
});

describe('WebSocket credits', () => {
  it('books connection, subscribe, notifications, 0.1 MB and unsubscribe as priced', async () => {
    const prices = { connection: 2, subscribe: 5, unsubscribe: 3, notification: 1, tenthMb: 7 };
    harness = await startWsHarness([{ name: 'a', ws: prices, prices: {} }]);
    const client = await open();
    const key = keyOf(7);
    const { result: id } = await client.call('accountSubscribe', [key, { encoding: 'base64' }]);
    const data = new Uint8Array(30_000);
    for (let i = 0; i < 10; i++) {
      harness.chain.setAccount(key, { data, lamports: i });
      harness.chain.advanceSlots(1);
    }
    await client.notifications(id, 10);
    expect(await client.call('accountUnsubscribe', [id])).toMatchObject({ result: true });
    // Subscribe answer, 10 notifications, unsubscribe answer: every byte the node sent.
    const counters = () => harness!.cascade.ws.hub.pool.snapshot('a')!.counters;
    await until(() => counters().messages === 12);
    const bytes = counters().bytes;
    expect(bytes).toBeGreaterThan(10 * 40_000);
    const used = (await harness.cascade.close()).usage.a;
    expect(used).toBe(2 + 5 + 10 * 1 + 3 + Math.floor(bytes / 100_000) * 7);
  });
});
