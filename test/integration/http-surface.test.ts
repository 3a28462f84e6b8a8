import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startHeldUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

async function raw(
  url: string,
  method: string,
  path: string,
): Promise<{ status: number; allow: string | null }> {
  const response = await fetch(`${url}${path}`, { method });
  await response.text();
  return { status: response.status, allow: response.headers.get('allow') };
}

describe('HTTP surface', () => {
  it('proxies POST / and POST /send-request alike', async () => {
    harness = await startHarness([{ name: 'n' }]);
    const root = await harness.post(rpc('getSlot', 1), '/');
    const legacy = await harness.post(rpc('getSlot', 2), '/send-request');
    expect(root.status).toBe(200);
    expect(legacy.status).toBe(200);
    expect(root.json).toMatchObject({ jsonrpc: '2.0', id: 1 });
    expect(legacy.json).toMatchObject({ jsonrpc: '2.0', id: 2 });
    expect(root.contentType).toMatch(/^application\/json/);
  });

  it('answers 405 for wrong methods and 404 for unknown paths', async () => {
    harness = await startHarness([{ name: 'n' }]);
    expect(await raw(harness.url, 'GET', '/send-request')).toEqual({ status: 405, allow: 'POST' });
    expect(await raw(harness.url, 'GET', '/')).toEqual({ status: 405, allow: 'POST' });
    expect(await raw(harness.url, 'POST', '/health')).toEqual({ status: 405, allow: 'GET' });
    expect((await raw(harness.url, 'GET', '/nope')).status).toBe(404);
    expect((await raw(harness.url, 'POST', '/v1/rpc')).status).toBe(404);
  });

  it('has no /metrics route when metrics are off', async () => {
    harness = await startHarness([{ name: 'n' }], { server: { enableMetrics: false } });
    expect((await raw(harness.url, 'GET', '/metrics')).status).toBe(404);
  });

  it.each([
    ['not JSON', 'hello', 'null'],
    ['missing method', '{"jsonrpc":"2.0","id":5}', '5'],
    ['non-string method', '{"jsonrpc":"2.0","id":"q","method":5}', '"q"'],
    ['trailing garbage after a non-leading method', '{"id":1,"method":"getSlot"} x', 'null'],
    ['empty body', '', 'null'],
    ['scalar', '42', 'null'],
  ])('answers 400 Parse error for %s, echoing a readable id', async (_name, body, idJson) => {
    harness = await startHarness([{ name: 'n' }]);
    const response = await harness.post(body);
    expect(response.status).toBe(400);
    expect(response.body).toBe(
      `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":${idJson}}`,
    );
    expect(harness.mocks.n!.stats().requests).toBe(0);
  });

  it('routes a method name written with escapes', async () => {
    harness = await startHarness([{ name: 'n', prices: { getSlot: 1 }, unknownCost: null }]);
    const response = await harness.post('{"jsonrpc":"2.0","id":1,"method":"get\\u0053lot"}');
    expect(response.status).toBe(200);
  });

  it('refuses a body over max_body_bytes with 413 and closes the connection', async () => {
    harness = await startHarness([{ name: 'n' }], { server: { maxBodyBytes: 1024 } });
    const big = JSON.stringify(rpc('getSlot', 1, ['x'.repeat(2000)]));
    const response = await harness.post(big);
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ error: { code: -32600 } });
    const small = await harness.post(rpc('getSlot'));
    expect(small.status).toBe(200);
  });

  it('refuses a declared Content-Length over max_body_bytes before the body comes', async () => {
    harness = await startHarness([{ name: 'n' }], { server: { maxBodyBytes: 1024 } });
    const { port } = new URL(harness.url);
    const statusOf = (length: number, sendBody: boolean) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify(rpc('getSlot', 1, ['z'.repeat(length - 60)]));
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/',
            headers: { 'content-type': 'application/json', 'content-length': String(length) },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        // Only the headers: the answer must not wait for a body that never comes.
        if (sendBody) req.end(body.padEnd(length, ' '));
        else req.flushHeaders();
      });
    expect(await statusOf(1025, false)).toBe(413);
    expect(await statusOf(10_000, false)).toBe(413);
    expect(await statusOf(1024, true)).toBe(200);
    expect(await statusOf(999, true)).toBe(200);
    expect(harness.mocks.n!.stats().requests).toBe(2);
  });

  it('keeps serving when a client hangs up in the middle of its body', async () => {
    harness = await startHarness([{ name: 'n' }]);
    const { port } = new URL(harness.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/',
        headers: { 'content-length': '500' },
      });
      req.on('error', () => resolve());
      req.write('{"jsonrpc":"2.0","method":"getSlot"', () => setTimeout(() => req.destroy(), 20));
      req.on('close', () => resolve());
    });
    expect((await harness.post(rpc('getSlot'))).status).toBe(200);
    expect(harness.mocks.n!.stats().requests).toBe(1);
    expect(harness.server.requestCounts().forwarded).toBe(1);
  });

  it('refuses an oversized chunked body while it streams in', async () => {
    harness = await startHarness([{ name: 'n' }], { server: { maxBodyBytes: 1024 } });
    const { port } = new URL(harness.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/',
          headers: { 'transfer-encoding': 'chunked' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"method":"getSlot","params":["');
      req.write('y'.repeat(4096));
      // never end: the server must answer without waiting for the rest
    });
    expect(status).toBe(413);
  });
});

describe('GET /health', () => {
  it('reports every node unknown and ok on a fresh start, in config order', async () => {
    harness = await startHarness([
      { name: 'b', tier: 1 },
      { name: 'a', tier: 0 },
    ]);
    const response = await fetch(`${harness.url}/health`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    expect(text).toBe(
      '{"status":"ok","active_nodes":2,"total_nodes":2,"nodes":[' +
        '{"name":"b","tier":1,"status":"unknown","latency_ms":null},' +
        '{"name":"a","tier":0,"status":"unknown","latency_ms":null}]}',
    );
  });

  it('reports up with latency after a success, degraded when one is down, critical when all are', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        { name: 'good', tier: 0 },
        { name: 'bad', tier: 1, mock: { fault: { kind: 'close' } } },
      ],
      { clock },
    );
    const h = harness;
    const good = await startHeldUpstream();
    pointAt(h, 'good', good.url);
    const first = h.post(rpc('getSlot'));
    await expect.poll(() => good.held).toBe(1);
    clock.advance(20); // good answers 20 ms after it was asked, on the proxy's clock
    good.release();
    expect((await first).status).toBe(200);
    let health = await h.health();
    expect(health.nodes[0]).toMatchObject({ name: 'good', status: 'up', latency_ms: 20 });
    expect(health.status).toBe('ok');
    h.mocks.good!.setBehaviour({ fault: { kind: 'close' } });
    pointAt(h, 'good', h.mocks.good!.url);
    await h.post(rpc('getSlot'));
    health = await h.health();
    expect(health).toMatchObject({ status: 'critical', active_nodes: 0, total_nodes: 2 });
  });

  it('reports degraded when some nodes are penalized', async () => {
    harness = await startHarness(
      [
        { name: 'bad', tier: 0, mock: { fault: { kind: 'close' } } },
        { name: 'good', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    await harness.post(rpc('getSlot'));
    expect(await harness.health()).toMatchObject({
      status: 'degraded',
      active_nodes: 1,
      total_nodes: 2,
    });
  });

  it('is critical with an empty node set, where every request gets 502', async () => {
    harness = await startHarness([]);
    expect(await harness.health()).toEqual({
      status: 'critical',
      active_nodes: 0,
      total_nodes: 0,
      nodes: [],
    });
    expect((await harness.post(rpc('getSlot'))).status).toBe(502);
  });
});

describe('ranking', () => {
  it('prefers the node whose answers were faster, after the next ranking tick', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        { name: 'slow', tier: 0, maxConcurrent: 1 },
        { name: 'fast', tier: 0, maxConcurrent: 1 },
      ],
      { clock },
    );
    const h = harness;
    const slow = await startHeldUpstream();
    const fast = await startHeldUpstream();
    pointAt(h, 'slow', slow.url);
    pointAt(h, 'fast', fast.url);
    // Two at once: each node answers one, so both are measured: fast in 1 ms, slow in 60 ms.
    const answers = [h.post(rpc('getSlot', 1)), h.post(rpc('getSlot', 2))];
    await expect.poll(() => slow.held + fast.held).toBe(2);
    clock.advance(1);
    fast.release();
    await expect.poll(() => h.server.topology.node('fast')!.ema.isMeasured).toBe(true);
    clock.advance(59);
    slow.release();
    expect((await Promise.all(answers)).map((a) => a.status)).toEqual([200, 200]);
    // The ranking tick (every second, on its own timer) puts the faster node first.
    await expect
      .poll(() => h.server.topology.table.ranked.map((n) => n.name))
      .toEqual(['fast', 'slow']);
    slow.open();
    fast.open();
    for (let i = 0; i < 4; i++) await h.post(rpc('getSlot', i));
    expect(fast.received).toBe(5);
    expect(slow.received).toBe(1);
  });
});
