import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { CacheConfig, CacheMethodOverride } from '../../src/core/config/types.js';
import { priceList } from '../support/node-config.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startHeldUpstream, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

function cacheConfig(overrides: Partial<CacheConfig> = {}): CacheConfig {
  return {
    enabled: true,
    coalesce: true,
    maxBytes: 1 << 20,
    maxEntryBytes: 64 * 1024,
    ttlMs: 400,
    evmFinalityDepth: undefined,
    responseHeader: true,
    methods: new Map<string, CacheMethodOverride>(),
    ...overrides,
  };
}

/** Resolves once `check` holds, polling on the event loop (no wall-clock assertion). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** The value of one series in the proxy's /metrics. */
async function metric(h: Harness, series: string): Promise<number | undefined> {
  const text = await h.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function post(
  url: string,
  body: string,
): Promise<{ status: number; text: string; cache: string | null }> {
  const response = await fetch(url, { method: 'POST', body });
  return {
    status: response.status,
    text: await response.text(),
    cache: response.headers.get('x-cascade-cache'),
  };
}

/** The raw id text of an answer (so 2^64 and "strings" are compared as written). */
function idText(answer: string): string | undefined {
  return /"id":(-?\d+|"[^"]*"|null)/.exec(answer)?.[1];
}

describe('in-flight coalescing', () => {
  it('sends 100 concurrent identical getSlot upstream once; each client gets its own id', async () => {
    // No [cache] table: the product default, coalescing on.
    harness = await startHarness([{ name: 'a' }], { clock: new ManualClock(1000), cache: null });
    const upstream = await startHeldUpstream();
    pointAt(harness, 'a', upstream.url);
    const ids = Array.from({ length: 100 }, (_, i) =>
      i % 3 === 0 ? `"client-${i}"` : i % 3 === 1 ? String(i) : `1844674407370955161${i % 10}0`,
    );
    const answers = ids.map((id) =>
      post(harness!.url, `{"jsonrpc":"2.0","id":${id},"method":"getSlot","params":[]}`),
    );
    const h = harness;
    await until(
      async () =>
        (await metric(h, 'rpc_cache_requests_total{method="getSlot",result="coalesced"}')) === 99,
    );
    expect(upstream.received).toBe(1);
    upstream.release();
    const results = await Promise.all(answers);
    expect(upstream.received).toBe(1);
    results.forEach((result, i) => {
      expect(result.status).toBe(200);
      expect(idText(result.text)).toBe(ids[i]);
      expect(JSON.parse(result.text)).toMatchObject({ jsonrpc: '2.0', result: 1 });
    });
    expect(await metric(h, 'rpc_cache_requests_total{method="getSlot",result="miss"}')).toBe(1);
    // One booking for the one attempt; the other 99 are credits saved at a's price (1).
    expect(harness.ledger.counter('a').used).toBe(1);
    expect(await metric(h, 'rpc_credits_saved_total{node="a"}')).toBe(99);
    expect(harness.ledger.counter('a').saved).toBe(99);
  });

  it('never coalesces writes: 100 identical sendTransaction reach the upstream 100 times', async () => {
    harness = await startHarness([{ name: 'a', maxConcurrent: 200 }], {
      clock: new ManualClock(1000),
      cache: null,
    });
    const upstream = await startHeldUpstream();
    pointAt(harness, 'a', upstream.url);
    const body = JSON.stringify(rpc('sendTransaction', 1, ['AQAB']));
    const answers = Array.from({ length: 100 }, () => post(harness!.url, body));
    await until(() => upstream.held === 100);
    upstream.release();
    const results = await Promise.all(answers);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(upstream.received).toBe(100);
    expect(await metric(harness, 'rpc_cache_requests_total{method="other",result="bypass"}')).toBe(
      100,
    );
  });

  it('lets each waiter route on its own when the shared attempt fails', async () => {
    harness = await startHarness([{ name: 'a' }], { clock: new ManualClock(1000), cache: null });
    let received = 0;
    let dropFirst: (() => void) | undefined;
    const url = await startUpstream((req, res) => {
      const n = ++received;
      req.resume();
      req.on('end', () => {
        if (n === 1) {
          dropFirst = () => res.destroy();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"jsonrpc":"2.0","id":0,"result":${n}}`);
      });
    });
    pointAt(harness, 'a', url);
    const body = (id: number) => JSON.stringify(rpc('getBalance', id, ['addr']));
    const leader = post(harness.url, body(0));
    await until(() => dropFirst !== undefined);
    const waiters = [1, 2, 3].map((id) => post(harness!.url, body(id)));
    const h = harness;
    await until(
      async () =>
        (await metric(h, 'rpc_cache_requests_total{method="getBalance",result="coalesced"}')) === 3,
    );
    dropFirst!();
    expect((await leader).status).toBe(502);
    const results = await Promise.all(waiters);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(received).toBe(4);
  });
});

describe('response cache', () => {
  it('answers head-tracking reads for the TTL, then asks again (a mock whose answer changes)', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness([{ name: 'a' }], { clock, cache: cacheConfig() });
    const upstream = await startHeldUpstream();
    upstream.open();
    pointAt(harness, 'a', upstream.url);
    const first = await post(harness.url, JSON.stringify(rpc('getSlot', 1)));
    const second = await post(harness.url, JSON.stringify(rpc('getSlot', 'two')));
    expect([first.cache, second.cache]).toEqual(['miss', 'hit']);
    expect(JSON.parse(first.text)).toEqual({ jsonrpc: '2.0', id: 1, result: 1 });
    expect(JSON.parse(second.text)).toEqual({ jsonrpc: '2.0', id: 'two', result: 1 });
    clock.advance(399);
    expect(JSON.parse((await post(harness.url, JSON.stringify(rpc('getSlot', 3)))).text)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      result: 1,
    });
    clock.advance(1);
    const later = await post(harness.url, JSON.stringify(rpc('getSlot', 4)));
    expect(later.cache).toBe('miss');
    expect(JSON.parse(later.text)).toEqual({ jsonrpc: '2.0', id: 4, result: 2 });
    expect(upstream.received).toBe(2);
  });

  it('never stores reads without a cache rule: each answer is the upstream’s latest', async () => {
    harness = await startHarness([{ name: 'a' }], {
      clock: new ManualClock(1000),
      cache: cacheConfig(),
    });
    const upstream = await startHeldUpstream();
    upstream.open();
    pointAt(harness, 'a', upstream.url);
    const results: unknown[] = [];
    for (const id of [1, 2, 3]) {
      results.push(
        JSON.parse((await post(harness.url, JSON.stringify(rpc('getBalance', id, ['x'])))).text),
      );
    }
    expect(results.map((r) => (r as { result: number }).result)).toEqual([1, 2, 3]);
  });

  it('never stores errors or null lookups, and stores a confirmed transaction nowhere', async () => {
    harness = await startHarness([{ name: 'a' }], {
      clock: new ManualClock(1000),
      cache: cacheConfig(),
    });
    let received = 0;
    const url = await startUpstream((req, res) => {
      received++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { id, method, params } = JSON.parse(Buffer.concat(chunks).toString()) as {
          id: unknown;
          method: string;
          params: unknown[];
        };
        const answer =
          method === 'getGenesisHash'
            ? { error: { code: -32005, message: 'Node is behind' } }
            : method === 'getBlock'
              ? { result: null }
              : { result: { slot: 5, params } };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, ...answer }));
      });
    });
    pointAt(harness, 'a', url);
    const ask = (method: string, params: unknown[]) =>
      post(harness!.url, JSON.stringify(rpc(method, 1, params)));
    for (let i = 0; i < 2; i++) {
      await ask('getGenesisHash', []);
      await ask('getBlock', [5]);
      await ask('getTransaction', ['sig', { commitment: 'confirmed' }]);
    }
    expect(received).toBe(6);
    // …while the same transaction at finalized is asked once.
    await ask('getTransaction', ['sig', { commitment: 'finalized' }]);
    const hit = await ask('getTransaction', ['sig', { commitment: 'finalized' }]);
    expect(hit.cache).toBe('hit');
    expect(received).toBe(7);
  });

  it('serves batch elements from the cache, in order, each with its own id', async () => {
    harness = await startHarness([{ name: 'a' }], {
      clock: new ManualClock(1000),
      cache: cacheConfig(),
    });
    const mock = harness.mocks.a!;
    const batch = (ids: string[]) =>
      `[{"jsonrpc":"2.0","id":${ids[0]},"method":"getGenesisHash"},` +
      `{"jsonrpc":"2.0","id":${ids[1]},"method":"getBalance","params":["11111111111111111111111111111111"]},` +
      `{"jsonrpc":"2.0","method":"getGenesisHash"},` +
      `{"jsonrpc":"2.0","id":${ids[2]},"method":"getGenesisHash"}]`;
    const first = JSON.parse((await post(harness.url, batch(['1', '2', '3']))).text) as Array<{
      id: unknown;
    }>;
    expect(first.map((a) => a.id)).toEqual([1, 2, 3]);
    const before = mock.stats().byMethod.getGenesisHash ?? 0;
    const answer = await post(harness.url, batch(['"x"', '18446744073709551616', 'null']));
    expect(answer.text.match(/"id":("x"|\d+|null)/g)).toEqual([
      '"id":"x"',
      '"id":18446744073709551616',
      '"id":null',
    ]);
    const second = JSON.parse(answer.text) as Array<{ result: unknown }>;
    expect(second[0]!.result).toBe('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d');
    expect(second[2]!.result).toBe(second[0]!.result);
    // Only the notification went upstream for getGenesisHash.
    expect((mock.stats().byMethod.getGenesisHash ?? 0) - before).toBe(1);
  });

  it('says in the access log how the cache met each request', async () => {
    harness = await startHarness([{ name: 'a' }], {
      clock: new ManualClock(1000),
      cache: cacheConfig(),
      accessLog: true,
    });
    for (const id of [1, 2]) await post(harness.url, JSON.stringify(rpc('getGenesisHash', id)));
    const lines = harness.logs
      .map((line) => JSON.parse(line) as { msg: string; node?: string; cache?: string })
      .filter((line) => line.msg === 'request');
    expect(lines.map((line) => [line.node, line.cache])).toEqual([
      ['a', 'miss'],
      ['cache', 'hit'],
    ]);
  });

  it('applies a changed [cache] on reload, and keeps stored answers across a price change', async () => {
    harness = await startHarness([{ name: 'a', prices: { getGenesisHash: 3 } }], {
      clock: new ManualClock(1000),
      cache: cacheConfig(),
    });
    const h = harness;
    const ask = async () => (await post(h.url, JSON.stringify(rpc('getGenesisHash', 1)))).cache;
    expect(await ask()).toBe('miss');
    expect(await ask()).toBe('hit');
    expect(await metric(h, 'rpc_credits_saved_total{node="a"}')).toBe(3);
    const repriced = h.server.nodes().map((n) => ({
      ...n,
      pricing: priceList({ getGenesisHash: 5 }, 1),
    }));
    h.server.reload({ ...h.server.config, nodes: repriced });
    expect(await ask()).toBe('hit');
    expect(await metric(h, 'rpc_credits_saved_total{node="a"}')).toBe(8);
    h.server.reload({
      ...h.server.config,
      cache: cacheConfig({ methods: new Map([['getGenesisHash', { cache: 'never' }]]) }),
    });
    expect(await ask()).toBe('miss');
    expect(await ask()).toBe('miss');
    expect(await metric(h, 'rpc_cache_bytes')).toBe(0);
    expect(await metric(h, 'rpc_cache_entries')).toBe(0);
  });
});
