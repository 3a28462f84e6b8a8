/**
 * Whose fault an upstream's error is, seen from the fleet: node-state errors move on to the
 * next node, and an unknown error is judged by whether other nodes agree.
 */
import { describe, expect, it } from 'vitest';
import { answering, errorBody, states } from '../support/error-answers.js';
import { rpc } from '../support/proxy-harness.js';
import { useHarness } from '../support/use-harness.js';

const start = useHarness();

describe('node-state errors move on; when every node has one, the client gets an upstream error', () => {
  it('relays the last upstream error, not "All nodes failed"', async () => {
    const first = errorBody({ code: -32000, message: 'header not found' });
    const last = errorBody({ code: -32000, message: 'missing trie node 1a2b (path )' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(first) },
      { name: 'b', tier: 1, mock: answering(last) },
    ]);
    const answer = await h.post(rpc('eth_getBalance', 1));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(last);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'unknown' });
    expect([h.ledger.counter('a').used, h.ledger.counter('b').used]).toEqual([1, 1]);
    expect(await h.metrics()).toMatch(/rpc_requests_total\{outcome="forwarded"\} 1/);
  });

  it('relays an upstream error even when a later node failed at the transport', async () => {
    const error = errorBody({ code: -32004, message: 'Block not available for slot 5' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(error) },
      { name: 'b', tier: 1, mock: { fault: { kind: 'close' } } },
    ]);
    const answer = await h.post(rpc('getBlock', 1));
    expect([answer.status, answer.body]).toEqual([200, error]);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'down' });
  });

  it('keeps the synthetic 502 for transport failures only', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: { fault: { kind: 'close' } } },
      { name: 'b', tier: 1, mock: { fault: { kind: 'invalid_json' } } },
    ]);
    const answer = await h.post(rpc('getSlot', 7));
    expect(answer.status).toBe(502);
    expect(answer.json).toMatchObject({ id: 7, error: { code: -32000 } });
  });
});

describe('an unknown error is judged by agreement', () => {
  const unknown = errorBody({ code: -32603, message: 'internal error: something odd' });

  it('two nodes agreeing make it the request’s: relayed after two attempts, nobody penalized', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1, mock: answering(unknown) },
      { name: 'c', tier: 2 },
    ]);
    const answer = await h.post(rpc('getSlot', 1));
    expect([answer.status, answer.body]).toEqual([200, unknown]);
    expect(h.mocks.c!.stats().requests).toBe(0);
    expect(await states(h)).toEqual({ a: 'unknown', b: 'unknown', c: 'unknown' });
  });

  it('a node that answers where the first erred proves the first at fault', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1 },
    ]);
    const answer = await h.post(rpc('getSlot', 1));
    expect((answer.json as { result?: unknown }).result).toBeDefined();
    expect(await states(h)).toEqual({ a: 'down', b: 'up' });
  });

  it('agreement with an earlier node stands even after a third said something else', async () => {
    const other = errorBody({ code: -32603, message: 'internal error: something else' });
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1, mock: answering(other) },
      { name: 'c', tier: 2, mock: answering(unknown) },
      { name: 'd', tier: 3 },
    ]);
    const answer = await h.post(rpc('getSlot', 1));
    expect([answer.status, answer.body]).toEqual([200, unknown]);
    expect(h.mocks.d!.stats().requests).toBe(0);
    // `b` was the odd one out.
    expect(await states(h)).toEqual({ a: 'unknown', b: 'down', c: 'unknown', d: 'unknown' });
  });

  it('a fleet never goes down for one request: many such requests leave every node active', async () => {
    const h = await start([
      { name: 'a', tier: 0, mock: answering(unknown) },
      { name: 'b', tier: 1, mock: answering(unknown) },
      { name: 'c', tier: 2, mock: answering(unknown) },
    ]);
    for (let i = 0; i < 5; i++) expect((await h.post(rpc('getSlot', i))).body).toBe(unknown);
    expect((await h.health()).status).toBe('ok');
    // Two attempts per request at most.
    expect(h.mocks.c!.stats().requests).toBe(0);
  });
});
