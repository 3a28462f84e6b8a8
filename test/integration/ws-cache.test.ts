/**
 * The response cache and in-flight coalescing seen through the WebSocket door: a socket request
 * and a socket batch element are cached and coalesced exactly like HTTP ones, in the same cache
 * (an answer stored for one door serves the other), with the same metrics and credits saved.
 * Real clients where they fit (viem's webSocket transport, ethers' WebSocketProvider, which send
 * every request over the socket); raw sockets where the test needs the exact bytes.
 */
import { Network, WebSocketProvider } from 'ethers';
import { createPublicClient, webSocket } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import type { CacheConfig } from '../../src/core/config/types.js';
import { closeUpstreams, startHeldUpstream } from '../support/upstreams.js';
import { WsTestClient, until } from '../support/ws-client.js';
import {
  startWsHarness,
  useWsHarness,
  type WsHarness,
  type WsTestNode,
} from '../support/ws-harness.js';

const ws = useWsHarness();
afterEach(closeUpstreams);

const CACHE: CacheConfig = {
  enabled: true,
  coalesce: true,
  maxBytes: 8 << 20,
  maxEntryBytes: 256 * 1024,
  ttlMs: 400,
  evmFinalityDepth: undefined,
  responseHeader: false,
  methods: new Map(),
};

/** One node, priced so that credits saved show (2 a call), with the cache on. */
const NODE: WsTestNode = {
  name: 'a',
  prices: { eth_chainId: 2, eth_getBlockByNumber: 2, getSlot: 2, getGenesisHash: 2 },
};

function start(): Promise<WsHarness> {
  return ws.start([NODE], { cache: CACHE });
}

/** The value of one series in /metrics (0 when absent: a counter not yet touched). */
async function metric(h: WsHarness, series: string): Promise<number> {
  const line = (await h.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** The request, cache and credits-saved series of /metrics (durations left out: they vary). */
async function countedSeries(h: WsHarness): Promise<string[]> {
  const counted = /^(rpc_requests_total|rpc_cache_requests_total|rpc_credits_saved_total)\{/;
  return (await h.metrics()).split('\n').filter((line) => counted.test(line));
}

function upstreamCalls(h: WsHarness, method: string): number {
  return h.mocks.a!.stats().byMethod[method] ?? 0;
}

/** Sends `body` on the socket and resolves with the next message's raw text. */
function exchange(client: WsTestClient, body: string): Promise<string> {
  const answer = new Promise<string>((resolve) =>
    client.ws.once('message', (data: Buffer) => resolve(data.toString())),
  );
  client.send(body);
  return answer;
}

async function post(h: WsHarness, body: string): Promise<string> {
  return (await fetch(h.url, { method: 'POST', body })).text();
}

/** Points node `name` at `url` (a reload, as an operator would). */
function pointAt(h: WsHarness, name: string, url: string): void {
  const server = h.cascade.server;
  server.reload({
    ...server.config,
    nodes: server.nodes().map((n) => (n.name === name ? { ...n, url, redactedUrl: url } : n)),
  });
}

describe('a WebSocket request meets the cache', () => {
  it("viem's webSocket transport: a second getChainId is a hit, counted and saved", async () => {
    const h = await start();
    const client = createPublicClient({ transport: webSocket(h.wsUrl) });
    try {
      expect(await client.getChainId()).toBe(1);
      expect(await client.getChainId()).toBe(1);
    } finally {
      (await client.transport.getRpcClient()).close();
    }
    expect(upstreamCalls(h, 'eth_chainId')).toBe(1);
    expect(await metric(h, 'rpc_cache_requests_total{method="eth_chainId",result="miss"}')).toBe(1);
    expect(await metric(h, 'rpc_cache_requests_total{method="eth_chainId",result="hit"}')).toBe(1);
    // The hit cost nothing: the credits the first node in walk order would have charged.
    expect(await metric(h, 'rpc_credits_saved_total{node="a"}')).toBe(2);
    expect(await metric(h, 'rpc_requests_total{outcome="forwarded"}')).toBe(2);
  });

  it("ethers' WebSocketProvider shares one cache with HTTP, both ways", async () => {
    const h = await start();
    const network = Network.from(1);
    const provider = new WebSocketProvider(h.wsUrl, network, { staticNetwork: network });
    try {
      // The finalized head comes from the traffic: a client asking for the finalized block.
      const finalized = await provider.getBlock('finalized');
      const n = finalized!.number - 3;
      const block = await provider.getBlock(n);
      expect(upstreamCalls(h, 'eth_getBlockByNumber')).toBe(2);
      // Stored by the socket request, served to an HTTP client with its own id.
      const params = `["0x${n.toString(16)}",false]`;
      const overHttp = await post(
        h,
        `{"jsonrpc":"2.0","id":"web","method":"eth_getBlockByNumber","params":${params}}`,
      );
      expect(JSON.parse(overHttp)).toMatchObject({ id: 'web', result: { hash: block!.hash } });
      // Stored by an HTTP request, served to the socket.
      const older = n - 1;
      const first = await post(
        h,
        `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x${older.toString(16)}",false]}`,
      );
      const again = await provider.getBlock(older);
      expect(again?.hash).toBe((JSON.parse(first) as { result: { hash: string } }).result.hash);
      expect(upstreamCalls(h, 'eth_getBlockByNumber')).toBe(3);
      expect(
        await metric(h, 'rpc_cache_requests_total{method="eth_getBlockByNumber",result="hit"}'),
      ).toBe(2);
    } finally {
      await provider.destroy();
    }
  });
});

describe('identical requests in flight, over sockets and HTTP', () => {
  it('go upstream once; every client gets the answer with its own id', async () => {
    const h = await start();
    const upstream = await startHeldUpstream();
    pointAt(h, 'a', upstream.url);
    const body = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"getSlot","params":[]}`;
    // An HTTP request leads; sockets join it while it is held upstream.
    const overHttp = post(h, body('"http"'));
    await until(() => upstream.held === 1);
    const clients = await Promise.all(Array.from({ length: 10 }, () => ws.open()));
    const ids = clients.map((_, i) => (i % 2 === 0 ? `"ws-${i}"` : `1844674407370955161${i}0`));
    const answers = clients.map((client, i) => exchange(client, body(ids[i]!)));
    const coalesced = 'rpc_cache_requests_total{method="getSlot",result="coalesced"}';
    await expect.poll(() => metric(h, coalesced)).toBe(10);
    expect(upstream.received).toBe(1);
    upstream.release();
    expect(JSON.parse(await overHttp)).toMatchObject({ id: 'http', result: 1 });
    const texts = await Promise.all(answers);
    texts.forEach((text, i) => {
      // The client's id exactly as it wrote it (2^64-sized ones included), the node's bytes.
      expect(text).toBe(`{"jsonrpc":"2.0","id":${ids[i]},"result":1}`);
    });
    expect(upstream.received).toBe(1);
    expect(await metric(h, 'rpc_cache_requests_total{method="getSlot",result="miss"}')).toBe(1);
    // One booking for the one attempt; the ten waiters saved a's price each.
    expect(await metric(h, 'rpc_credits_saved_total{node="a"}')).toBe(20);
  });
});

describe('a WebSocket batch', () => {
  it('answers an element from the cache in its place, with its id', async () => {
    const h = await start();
    const client = await ws.open();
    const batch = (first: number) =>
      JSON.stringify([
        { jsonrpc: '2.0', id: first, method: 'eth_chainId', params: [] },
        { jsonrpc: '2.0', id: first + 1, method: 'getHealth' },
      ]);
    const before = JSON.parse(await exchange(client, batch(1))) as Array<{ id: number }>;
    const after = JSON.parse(await exchange(client, batch(3))) as Array<{ id: number }>;
    expect(before).toMatchObject([
      { id: 1, result: '0x1' },
      { id: 2, result: 'ok' },
    ]);
    expect(after).toMatchObject([
      { id: 3, result: '0x1' },
      { id: 4, result: 'ok' },
    ]);
    expect(upstreamCalls(h, 'eth_chainId')).toBe(1);
    expect(upstreamCalls(h, 'getHealth')).toBe(2);
    expect(await metric(h, 'rpc_cache_requests_total{method="eth_chainId",result="hit"}')).toBe(1);
    expect(await metric(h, 'rpc_credits_saved_total{node="a"}')).toBe(2);
  });

  it('of nothing but invalid elements is a bad request, answered as HTTP answers it', async () => {
    const h = await start();
    const client = await ws.open();
    const overSocket = await exchange(client, '[1,"two"]');
    expect(JSON.parse(overSocket)).toEqual([
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null },
    ]);
    expect(await metric(h, 'rpc_requests_total{outcome="bad_request"}')).toBe(1);
    expect(await metric(h, 'rpc_requests_total{outcome="bad_gateway"}')).toBe(0);
    expect(await post(h, '[1,"two"]')).toBe(overSocket);
    expect(await metric(h, 'rpc_requests_total{outcome="bad_request"}')).toBe(2);
    expect(h.mocks.a!.stats().requests).toBe(0);
  });
});

describe('the same traffic through either door', () => {
  /** Requests sent one after another (no timing involved): hits, misses, bypasses, a batch. */
  const TRAFFIC = [
    '{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"}',
    '{"jsonrpc":"2.0","id":2,"method":"getGenesisHash"}',
    '{"jsonrpc":"2.0","id":3,"method":"eth_chainId","params":[]}',
    '{"jsonrpc":"2.0","id":4,"method":"getHealth"}',
    '{"jsonrpc":"2.0","id":5,"method":"sendTransaction","params":["AQAB"]}',
    '[{"jsonrpc":"2.0","id":6,"method":"eth_chainId","params":[]},{"jsonrpc":"2.0","id":7,"method":"getGenesisHash"},{"jsonrpc":"2.0","id":8,"method":"getMinimumBalanceForRentExemption","params":[0]}]',
    '[1]',
  ];

  /** A fresh cascade per door, so each starts from an empty cache and zero counters. */
  async function run(door: 'http' | 'ws'): Promise<{ answers: string[]; series: string[] }> {
    const h = await startWsHarness([NODE], { cache: CACHE });
    const client = door === 'ws' ? await WsTestClient.open(h.wsUrl) : undefined;
    try {
      const answers: string[] = [];
      for (const body of TRAFFIC) {
        answers.push(client === undefined ? await post(h, body) : await exchange(client, body));
      }
      return { answers, series: await countedSeries(h) };
    } finally {
      client?.close();
      await h.close();
    }
  }

  it('gives the same answers, the same cache metrics and the same credits saved', async () => {
    const overHttp = await run('http');
    const overSocket = await run('ws');
    expect(overSocket.answers).toEqual(overHttp.answers);
    expect(overSocket.series).toEqual(overHttp.series);
    expect(overHttp.series).toContain('rpc_credits_saved_total{node="a"} 6');
    expect(overHttp.series).toContain(
      'rpc_cache_requests_total{method="getGenesisHash",result="hit"} 2',
    );
  });
});
