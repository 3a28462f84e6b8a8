import { describe, expect, it } from 'vitest';
import { WsTestClient, until } from '../support/ws-client.js';
import { useWsHarness } from '../support/ws-harness.js';

const ws = useWsHarness();
const open = (url?: string): Promise<WsTestClient> => ws.open(url);

/** A base58 pubkey-looking key, unique per `i`. */
function keyOf(i: number): string {
  return `Acc${String(i).replace(/\d/g, (d) => 'ABCDEFGHJK'[Number(d)]!)}`.padEnd(44, 'x');
}

describe('per-client limits', () => {
  it('refuses a connection over the per-IP limit with 429 and takes it again once one closes', async () => {
    await ws.start([{ name: 'a' }], { server: { wsMaxConnectionsPerIp: 2 } });
    const first = await open();
    await open();
    await expect(WsTestClient.open(ws.harness.wsUrl)).rejects.toThrow('HTTP 429');
    first.close();
    await until(() => ws.harness.cascade.ws.entries().sessions === 1);
    await until(() => ws.harness.cascade.ws.entries().ips === 1);
    await open();
  });

  it('counts the client a trusted proxy names, not the proxy, against the per-IP limit', async () => {
    await ws.start([{ name: 'a' }], {
      server: { wsMaxConnectionsPerIp: 1, trustedProxies: ['127.0.0.1'] },
    });
    const from = (client: string): Promise<WsTestClient> =>
      WsTestClient.open(ws.harness.wsUrl, { headers: { 'x-forwarded-for': client } });
    await from('203.0.113.1');
    // Another client behind the same balancer has its own allowance.
    await from('203.0.113.2');
    await expect(from('203.0.113.1')).rejects.toThrow('HTTP 429');
    expect(ws.harness.cascade.ws.entries().ips).toBe(2);
  });

  it('answers a subscribe over the per-connection limit with an error, not a close', async () => {
    await ws.start([{ name: 'a' }], {
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
    await ws.start([{ name: 'a' }], { server: { wsMaxMessagesPerSecond: 5 } });
    const client = await open();
    // The clock does not move between these: the bucket (burst 5) has no sixth token.
    const answers = await Promise.all(Array.from({ length: 20 }, () => client.call('getHealth')));
    expect(answers.filter((answer) => answer.error?.code === -32005)).not.toHaveLength(0);
  });

  it('closes a connection whose message is over max_body_bytes with 1009', async () => {
    await ws.start([{ name: 'a' }], { server: { maxBodyBytes: 1024 } });
    const client = await open();
    client.send({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: ['x'.repeat(2000)] });
    expect((await client.closed).code).toBe(1009);
  });

  it('closes a client that stops reading with 1008', async () => {
    await ws.start([{ name: 'a' }], { server: { wsMaxBufferedBytes: 64 * 1024 } });
    const client = await open();
    const key = keyOf(1);
    const { result: id } = await client.call('accountSubscribe', [key, { encoding: 'base64' }]);
    client.ws.pause();
    const data = new Uint8Array(256 * 1024);
    for (let i = 0; i < 200 && ws.harness.cascade.ws.snapshot().slowClientCloses === 0; i++) {
      ws.harness.chain.setAccount(key, { data, lamports: i });
      await new Promise((resolve) => setImmediate(resolve));
    }
    client.ws.resume();
    expect((await client.closed).code).toBe(1008);
    expect(id).toBeTypeOf('number');
    expect(await ws.harness.metrics()).toContain('cascade_ws_slow_client_closes_total 1');
  });

  it('leaves no subscription and no map entry behind after 1,000 abrupt disconnects', async () => {
    // Setting up 1,000 sockets in one process blocks the loop for a while: no stall checks then.
    await ws.start([{ name: 'a' }], {
      server: { wsMaxConnectionsPerIp: 2000 },
      tuning: { pingIntervalMs: 60_000 },
    });
    const many = await Promise.all(
      Array.from({ length: 1000 }, () => WsTestClient.open(ws.harness.wsUrl)),
    );
    await Promise.all(
      many.map(async (client, i) => {
        await client.call('slotSubscribe');
        await client.call('accountSubscribe', [keyOf(i % 250)]);
      }),
    );
    expect(ws.harness.cascade.ws.hub.counts()).toEqual({
      shared: 251,
      clients: 2000,
      upstream: 251,
    });
    for (const client of many) client.ws.terminate();
    await until(() => ws.harness.mocks.a!.ws.stats().subscriptions === 0);
    await until(() => ws.harness.cascade.ws.entries().sessions === 0);
    expect(ws.harness.cascade.ws.hub.counts()).toEqual({ shared: 0, clients: 0, upstream: 0 });
    expect(ws.harness.cascade.ws.entries()).toEqual({ sessions: 0, ips: 0 });
    expect(ws.harness.mocks.a!.ws.stats().unsubscribes).toBe(251);
    expect([...ws.harness.cascade.ws.hub.pool.sockets()].every((socket) => socket.load === 0)).toBe(
      true,
    );
  });
});

describe('WebSocket credits', () => {
  it('books connection, subscribe, notifications, 0.1 MB and unsubscribe as priced', async () => {
    const prices = { connection: 2, subscribe: 5, unsubscribe: 3, notification: 1, tenthMb: 7 };
    await ws.start([{ name: 'a', ws: prices, prices: {} }]);
    const client = await open();
    const key = keyOf(7);
    const { result: id } = await client.call('accountSubscribe', [key, { encoding: 'base64' }]);
    const data = new Uint8Array(30_000);
    for (let i = 0; i < 10; i++) {
      ws.harness.chain.setAccount(key, { data, lamports: i });
      ws.harness.chain.advanceSlots(1);
    }
    await client.notifications(id, 10);
    expect(await client.call('accountUnsubscribe', [id])).toMatchObject({ result: true });
    // Subscribe answer, 10 notifications, unsubscribe answer: every byte the node sent.
    const counters = () => ws.harness.cascade.ws.hub.pool.snapshot('a')!.counters;
    await until(() => counters().messages === 12);
    const bytes = counters().bytes;
    expect(bytes).toBeGreaterThan(10 * 40_000);
    const used = (await ws.harness.cascade.close()).usage.a;
    expect(used).toBe(2 + 5 + 10 * 1 + 3 + Math.floor(bytes / 100_000) * 7);
  });
});
