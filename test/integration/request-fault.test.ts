/**
 * The request's fault is never the node's: notifications, bytes that are not JSON, odd ids,
 * and a connection the upstream closed under us never cost a node a penalty.
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { ManualClock } from '../../src/core/clock.js';
import { closeUpstreams, pointAt, startHeldUpstream, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

async function postRaw(
  h: Harness,
  body: Buffer | string,
): Promise<{ status: number; text: string }> {
  const response = await fetch(h.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, text: await response.text() };
}

function totalRequests(h: Harness): number {
  return Object.values(h.mocks).reduce((sum, mock) => sum + mock.stats().requests, 0);
}

describe('notifications (no id: JSON-RPC 2.0 §4.1)', () => {
  it('go to one node, and its empty answer is the success the client gets', async () => {
    const h = (harness = await startHarness([
      { name: 'a', tier: 0 },
      { name: 'b', tier: 0 },
      { name: 'c', tier: 1 },
    ]));
    for (let i = 0; i < 3; i++) {
      const answer = await postRaw(h, '{"jsonrpc":"2.0","method":"getSlot"}');
      expect(answer).toEqual({ status: 200, text: '' });
    }
    expect(totalRequests(h)).toBe(3);
    const booked = ['a', 'b', 'c'].map((name) => h.ledger.counter(name).used);
    expect(booked.reduce((x, y) => x + y)).toBe(3);
    expect((await h.health()).status).toBe('ok');
    expect(await h.metrics()).toMatch(/rpc_requests_total\{outcome="forwarded"\} 3/);
  });

  it('relay the status the node chose for its empty answer (204)', async () => {
    const h = (harness = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]));
    const url = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    pointAt(h, 'a', url);
    const answer = await postRaw(h, '{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]}');
    expect(answer).toEqual({ status: 204, text: '' });
    expect(h.mocks.b!.stats().requests).toBe(0);
    expect((await h.health()).nodes[0]!.status).toBe('up');
  });

  it('a request that expects an answer and gets an empty one is still the node’s failure', async () => {
    const h = (harness = await startHarness([
      { name: 'a', mock: { fault: { kind: 'empty' } } },
      { name: 'b', tier: 1 },
    ]));
    const answer = await h.post(rpc('getSlot', 1));
    expect(answer.status).toBe(200);
    expect((answer.json as { result?: unknown }).result).toBeDefined();
    expect((await h.health()).nodes[0]!.status).toBe('down');
  });
});

describe('bytes that are not JSON', () => {
  it('a body that is not UTF-8 gets 400 -32700 before any node is dialed or booked', async () => {
    const h = (harness = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]));
    const body = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"'),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    const answer = await postRaw(h, body);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: null,
    });
    expect(totalRequests(h)).toBe(0);
    expect([h.ledger.counter('a').used, h.ledger.counter('b').used]).toEqual([0, 0]);
    expect((await h.health()).status).toBe('ok');
  });
});

describe("ids survive exactly in cascade's own errors", () => {
  it.each(['12345678901234567890', '1.50', '-0', '"a\\"b"', '1e400'])('id %s', async (id) => {
    const h = (harness = await startHarness([{ name: 'a', dead: true }]));
    const answer = await postRaw(h, `{"jsonrpc":"2.0","id":${id},"method":"getSlot"}`);
    expect(answer.status).toBe(502);
    expect(answer.text.endsWith(`"id":${id}}`)).toBe(true);
  });
});

/**
 * An upstream that answers the first request on each connection and drops the connection
 * when a second one arrives on it: a keep-alive connection closed by the upstream just as we
 * sent on it (what a load balancer's idle timeout does without a Keep-Alive hint).
 */
async function droppingReusedConnections(): Promise<string> {
  const served = new WeakSet<Socket>();
  return startUpstream((req, res) => {
    const socket = req.socket;
    if (served.has(socket)) {
      socket.destroy();
      return;
    }
    served.add(socket);
    req.resume();
    req.on('end', () => {
      const body = '{"jsonrpc":"2.0","id":1,"result":7}';
      // No Keep-Alive hint: the client cannot know when we give up on idle connections.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
}

describe('a stale pooled connection is not the node’s fault', () => {
  it('resends once on a fresh connection to the same node: answered, one booking, no penalty', async () => {
    const h = (harness = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]));
    pointAt(h, 'a', await droppingReusedConnections());
    for (let i = 0; i < 4; i++) {
      const answer = await h.post(rpc('getSlot', i));
      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({ result: 7 });
    }
    expect(h.mocks.b!.stats().requests).toBe(0);
    expect(h.ledger.counter('a').used).toBe(4);
    expect((await h.health()).nodes[0]!.status).toBe('up');
    expect(await h.metrics()).toMatch(
      /rpc_upstream_attempts_total\{node="a",outcome="success"\} 4/,
    );
  });

  it('a node that drops fresh connections too is penalized', async () => {
    const h = (harness = await startHarness([
      { name: 'a', mock: { fault: { kind: 'close' } } },
      { name: 'b', tier: 1 },
    ]));
    const answer = await h.post(rpc('getSlot', 1));
    expect(answer.status).toBe(200);
    expect(h.mocks.a!.stats().requests).toBe(1);
    expect((await h.health()).nodes[0]!.status).toBe('down');
  });
});

describe('no invisible queue: the connection cap is the node’s saturation', () => {
  it('a node with every connection busy is skipped as saturated, not queued behind', async () => {
    const h = (harness = await startHarness(
      [
        { name: 'a', maxConnections: 2 },
        { name: 'b', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    ));
    const a = await startHeldUpstream();
    pointAt(h, 'a', a.url);
    const busy = [1, 2].map((id) => h.post(rpc('getSlot', id)));
    await expect.poll(() => a.held).toBe(2);
    expect((await h.post(rpc('getSlot', 3))).status).toBe(200);
    a.release();
    expect((await Promise.all(busy)).map((answer) => answer.status)).toEqual([200, 200]);
    expect(a.peak).toBe(2);
    expect(a.received).toBe(2);
    expect(h.mocks.b!.stats().requests).toBe(1);
    expect(await h.metrics()).toMatch(/rpc_upstream_skips_total\{node="a",reason="saturated"\} 1/);
  });

  it('with no other node, a request waits for a connection inside its budget', async () => {
    // The standing clock keeps the budget whole however long the waits take.
    const h = (harness = await startHarness([{ name: 'a', maxConnections: 1 }], {
      clock: new ManualClock(1000),
    }));
    const a = await startHeldUpstream();
    pointAt(h, 'a', a.url);
    const answers = [1, 2, 3].map((id) => h.post(rpc('getSlot', id)));
    for (let i = 0; i < 3; i++) {
      await expect.poll(() => a.held).toBe(1);
      a.release();
    }
    expect((await Promise.all(answers)).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(a.received).toBe(3);
    expect(a.peak).toBe(1);
  });
});
