import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_BEHAVIOUR } from './behaviour.js';
import { FaultPicker } from './faults.js';
import { startMockNode, type MockFault, type MockNode } from './index.js';

let node: MockNode | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await node?.close();
  node = undefined;
});

async function start(fault: MockFault, extra: Parameters<typeof startMockNode>[0] = { name: 'f' }) {
  node = await startMockNode({ ...extra, fault });
  return node;
}

function send(target: MockNode, id: unknown = 1) {
  agent ??= new Agent({ connections: 16 });
  return request(target.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'getSlot' }),
    dispatcher: agent,
  });
}

async function answer(target: MockNode, id: unknown = 1) {
  const res = await send(target, id);
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Polls `condition` (an event on a socket); `timeoutMs` only bounds a failing test. */
async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('fault modes', () => {
  it('http: status, headers and body as given (429 + Retry-After)', async () => {
    const target = await start({
      kind: 'http',
      status: 429,
      body: '{"message":"slow down"}',
      headers: { 'retry-after': '7' },
    });
    const res = await answer(target);
    expect(res).toMatchObject({ status: 429, text: '{"message":"slow down"}' });
    expect(res.headers['retry-after']).toBe('7');
    expect(res.headers['content-type']).toBe('application/json');
    expect(target.stats().faults).toBe(1);
  });

  it('http: an HTML 503 page, an empty 404 and a bodyless 204', async () => {
    const page = `<html><body>${'Service Unavailable '.repeat(50)}</body></html>`;
    const target = await start({ kind: 'http', status: 503, body: page, contentType: 'text/html' });
    expect(await answer(target)).toMatchObject({ status: 503, text: page });
    target.setBehaviour({ fault: { kind: 'http', status: 404 } });
    expect(await answer(target)).toMatchObject({ status: 404, text: '' });
    target.setBehaviour({ fault: { kind: 'http', status: 204 } });
    expect(await answer(target)).toMatchObject({ status: 204, text: '' });
  });

  it('rpc_error: a JSON-RPC error with the id echoed, status 200 unless set', async () => {
    const target = await start({ kind: 'rpc_error', code: -32005 });
    const res = await answer(target, 'abc');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32005, message: 'Request limit exceeded' },
      id: 'abc',
    });
    target.setBehaviour({
      fault: { kind: 'rpc_error', code: -32000, message: 'boom', status: 500 },
    });
    const second = await answer(target, null);
    expect(second.status).toBe(500);
    expect(JSON.parse(second.text)).toMatchObject({
      error: { code: -32000, message: 'boom' },
      id: null,
    });
  });

  it('invalid_json and empty: unparseable answers', async () => {
    const target = await start({ kind: 'invalid_json' });
    const bad = await answer(target);
    expect(bad.status).toBe(200);
    expect(() => JSON.parse(bad.text) as unknown).toThrow();
    target.setBehaviour({ fault: { kind: 'empty', status: 502 } });
    expect(await answer(target)).toMatchObject({ status: 502, text: '' });
  });

  it('close: the socket is destroyed without an answer', async () => {
    const target = await start({ kind: 'close' });
    await expect(send(target)).rejects.toThrow();
    expect(target.stats()).toMatchObject({ faults: 1, inFlight: 0 });
  });

  it('truncate: headers arrive, then the body breaks off', async () => {
    const target = await start({ kind: 'truncate' });
    const res = await send(target);
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
  });

  it('stall_body: headers arrive and the body never finishes until close', async () => {
    const target = await start({ kind: 'stall_body', status: 200 });
    const res = await send(target);
    expect(res.statusCode).toBe(200);
    const body = res.body.text();
    await target.close();
    await expect(body).rejects.toThrow();
  });

  it('stall: the request hangs until close(), which ends it and resolves', async () => {
    const target = await start({ kind: 'stall' });
    const pending = send(target);
    const outcome = pending.then(
      () => 'answered',
      () => 'failed',
    );
    await waitFor(() => target.stats().inFlight === 1);
    await target.close();
    expect(await outcome).toBe('failed');
    expect(target.stats().inFlight).toBe(0);
  });

  it('failFirst: the first N requests fail, then the node recovers', async () => {
    const target = await start({ kind: 'http', status: 503 }, { name: 'f', failFirst: 2 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await answer(target)).status);
    expect(statuses).toEqual([503, 503, 200, 200]);
    target.setBehaviour({ failFirst: 1 });
    expect((await answer(target)).status).toBe(503);
    expect((await answer(target)).status).toBe(200);
  });

  it('failureRate 0 never fails, 1 always fails', async () => {
    const target = await start({ kind: 'http', status: 500 }, { name: 'f', failureRate: 0 });
    for (let i = 0; i < 20; i++) expect((await answer(target)).status).toBe(200);
    target.setBehaviour({ failureRate: 1 });
    for (let i = 0; i < 20; i++) expect((await answer(target)).status).toBe(500);
  });

  it('failureRate 0.5 fails about half of 200 requests', async () => {
    const target = await start(
      { kind: 'rpc_error', code: -32000 },
      { name: 'f', failureRate: 0.5 },
    );
    let failed = 0;
    for (let i = 0; i < 200; i++) if ((await answer(target)).text.includes('"error"')) failed++;
    expect(failed).toBeGreaterThanOrEqual(60);
    expect(failed).toBeLessThanOrEqual(140);
    expect(target.stats().faults).toBe(failed);
  });

  it('heals with setBehaviour({ fault: { kind: "none" } })', async () => {
    const target = await start({ kind: 'close' });
    target.setBehaviour({ fault: { kind: 'none' } });
    expect((await answer(target)).status).toBe(200);
  });
});

describe('FaultPicker', () => {
  it('is deterministic for a seed', () => {
    const behaviour = { ...DEFAULT_BEHAVIOUR, fault: { kind: 'close' } as const, failureRate: 0.3 };
    const run = () => {
      const picker = new FaultPicker('seed');
      return Array.from({ length: 50 }, () => picker.pick(behaviour));
    };
    expect(run()).toEqual(run());
  });

  it('never picks without a fault', () => {
    const picker = new FaultPicker('x');
    picker.restart(3);
    expect(picker.pick({ ...DEFAULT_BEHAVIOUR, failFirst: 3 })).toBe(false);
  });
});
