import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { MockFault } from '../../src/mock/index.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * A faulty tier-0 node in front of a healthy tier-1 node. The proxy runs on `clock`: a
 * ManualClock (the default) keeps deadlines and penalties where the test puts them; null is
 * the real clock.
 */
async function faulty(fault: MockFault, clock: ManualClock | null = new ManualClock(1000)) {
  harness = await startHarness(
    [
      { name: 'faulty', tier: 0, mock: { fault } },
      { name: 'healthy', tier: 1 },
    ],
    { clock: clock ?? undefined },
  );
  return harness;
}

async function stateOf(h: Harness, name: string): Promise<string | undefined> {
  return (await h.health()).nodes.find((node) => node.name === name)?.status;
}

function attempts(text: string, node: string, outcome: string): number {
  const match = new RegExp(
    `rpc_upstream_attempts_total\\{node="${node}",outcome="${outcome}"\\} (\\d+)`,
  ).exec(text);
  return match ? Number(match[1]) : NaN;
}

describe('answer classification through the proxy (behaviour.md §4.7)', () => {
  it.each([
    // [row, fault, client status, answered by, faulty node penalized, outcome]
    ['1 connection closed', { kind: 'close' }, 200, 'healthy', true, 'transport_error'],
    ['2 body cut off mid-way', { kind: 'truncate' }, 200, 'healthy', true, 'body_error'],
    ['2 body stalls after the headers', { kind: 'stall_body' }, 200, 'healthy', true, 'body_error'],
    [
      '3 HTTP 400 is final',
      { kind: 'http', status: 400, body: '{"bad":"request"}' },
      400,
      'faulty',
      false,
      'forwarded_http_error',
    ],
    [
      '3 HTTP 404 is final',
      { kind: 'http', status: 404, body: 'nope' },
      404,
      'faulty',
      false,
      'forwarded_http_error',
    ],
    ['4a invalid JSON retries', { kind: 'invalid_json' }, 200, 'healthy', true, 'invalid_json'],
    ['4a empty 204 retries', { kind: 'empty', status: 204 }, 200, 'healthy', true, 'invalid_json'],
    [
      '4a small HTML 502 retries',
      { kind: 'http', status: 502, body: '<html>Bad Gateway</html>' },
      200,
      'healthy',
      true,
      'invalid_json',
    ],
    [
      '4b -32602 is final',
      { kind: 'rpc_error', code: -32602 },
      200,
      'faulty',
      false,
      'forwarded_rpc_error',
    ],
    [
      '4b -32601 is final',
      { kind: 'rpc_error', code: -32601 },
      200,
      'faulty',
      false,
      'forwarded_rpc_error',
    ],
    [
      '4c -32005 retries',
      { kind: 'rpc_error', code: -32005 },
      200,
      'healthy',
      true,
      'retryable_rpc_error',
    ],
    [
      '4c -32603 retries',
      { kind: 'rpc_error', code: -32603, status: 500 },
      200,
      'healthy',
      true,
      'retryable_rpc_error',
    ],
    [
      '6 429 JSON result is forwarded and penalizes',
      { kind: 'http', status: 429, body: '{"jsonrpc":"2.0","result":null,"id":1}' },
      429,
      'faulty',
      true,
      'forwarded_http_error',
    ],
    [
      '6 401 is a node problem',
      { kind: 'http', status: 401, body: '{"jsonrpc":"2.0","result":null,"id":1}' },
      401,
      'faulty',
      true,
      'forwarded_http_error',
    ],
  ] as const)('row %s', async (_row, fault, status, answeredBy, penalized, outcome) => {
    // A body stalled after the headers is cut off by the attempt deadline once the headers are
    // in, an event the test cannot see: that row alone runs on the real clock (500 ms).
    const h = await faulty(fault, fault.kind === 'stall_body' ? null : new ManualClock(1000));
    const response = await h.post(rpc('getSlot', 7));
    expect(response.status).toBe(status);
    expect(h.mocks.faulty!.stats().requests).toBe(1);
    expect(h.mocks.healthy!.stats().requests).toBe(answeredBy === 'healthy' ? 1 : 0);
    expect(await stateOf(h, 'faulty')).toBe(penalized ? 'down' : 'unknown');
    expect(attempts(await h.metrics(), 'faulty', outcome)).toBe(1);
  });

  it('forwards the upstream body bytes and content-type untouched', async () => {
    const body = '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: ü"},"id":7}';
    const h = await faulty({
      kind: 'http',
      status: 200,
      body,
      contentType: 'application/json; charset=utf-8',
    });
    const response = await h.post(rpc('getSlot', 7));
    expect(response.body).toBe(body);
    expect(response.contentType).toBe('application/json; charset=utf-8');
  });

  it('gives up on a stalled node after 500 ms and serves from the next', async () => {
    const clock = new ManualClock(1000);
    const h = await faulty({ kind: 'stall' }, clock);
    const pending = h.post(rpc('getSlot'));
    await expect.poll(() => h.mocks.faulty!.stats().inFlight).toBe(1);
    await clock.advanceAsync(499);
    expect(h.mocks.healthy!.stats().requests).toBe(0);
    clock.advance(1);
    expect((await pending).status).toBe(200);
    expect(h.mocks.healthy!.stats().requests).toBe(1);
    expect(await stateOf(h, 'faulty')).toBe('down');
    expect(attempts(await h.metrics(), 'faulty', 'transport_error')).toBe(1);
  });

  it('uses server.attempt_timeout_ms and request_timeout_ms from the config', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        { name: 'stalled', tier: 0, mock: { fault: { kind: 'stall' } } },
        { name: 'healthy', tier: 1 },
      ],
      { server: { attemptTimeoutMs: 150, requestTimeoutMs: 2000 }, clock },
    );
    const h = harness;
    const pending = h.post(rpc('getSlot'));
    await expect.poll(() => h.mocks.stalled!.stats().inFlight).toBe(1);
    await clock.advanceAsync(149);
    expect(h.mocks.healthy!.stats().requests).toBe(0);
    clock.advance(1); // 150 ms, not the default 500
    expect((await pending).status).toBe(200);
    expect(h.mocks.healthy!.stats().requests).toBe(1);
  });

  it('answers 504 when every node stalls past the 1 s budget', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        { name: 'a', mock: { fault: { kind: 'stall' } } },
        { name: 'b', mock: { fault: { kind: 'stall' } } },
      ],
      { clock },
    );
    const h = harness;
    const pending = h.post(rpc('getSlot', 'x'));
    await expect.poll(() => h.mocks.a!.stats().inFlight).toBe(1);
    clock.advance(500); // a used its whole 500 ms attempt deadline
    await expect.poll(() => h.mocks.b!.stats().inFlight).toBe(1);
    await clock.advanceAsync(499);
    expect(h.server.requestCounts().timeout).toBe(0);
    clock.advance(1); // the 1 s budget is spent, halfway through b's attempt
    const response = await pending;
    expect(response.status).toBe(504);
    expect(response.json).toMatchObject({
      error: { code: -32000, message: 'Global timeout exceeded while retrying nodes' },
      id: 'x',
    });
    // The second attempt was abandoned by the budget, not classified: b is not penalized.
    expect((await h.health()).nodes.map((n) => n.status)).toEqual(['down', 'unknown']);
  });

  it('a rejection is not a measurement: a 404 leaves the node unmeasured', async () => {
    const h = await faulty({ kind: 'http', status: 404, body: 'x' });
    await h.post(rpc('getSlot'));
    const node = (await h.health()).nodes.find((n) => n.name === 'faulty');
    expect(node).toMatchObject({ status: 'unknown', latency_ms: null });
  });
});

describe('penalties', () => {
  const clock = new ManualClock(1000);
  /** Seconds of penalty `name` has left, on the proxy's clock. */
  function penaltyLeft(h: Harness, name: string): number {
    return (h.server.topology.node(name)!.penalty.until - clock.now()) / 1000;
  }

  it('Retry-After on 429 extends the penalty', async () => {
    const h = await faulty(
      { kind: 'http', status: 429, body: 'slow down', headers: { 'retry-after': '120' } },
      clock,
    );
    await h.post(rpc('getSlot'));
    expect(penaltyLeft(h, 'faulty')).toBe(120);
  });

  it('Retry-After on 503 (HTTP-date form) is honoured', async () => {
    const date = new Date(clock.wallNow() + 60_000).toUTCString();
    const h = await faulty(
      { kind: 'http', status: 503, body: 'maintenance', headers: { 'retry-after': date } },
      clock,
    );
    await h.post(rpc('getSlot'));
    expect(penaltyLeft(h, 'faulty')).toBe(60);
  });

  it('caps Retry-After at 300 s', async () => {
    const h = await faulty(
      { kind: 'http', status: 429, body: 'x', headers: { 'retry-after': '86400' } },
      clock,
    );
    await h.post(rpc('getSlot'));
    expect(penaltyLeft(h, 'faulty')).toBe(300);
  });

  it('is never shortened by a later failure', async () => {
    harness = await startHarness(
      [
        {
          name: 'only',
          mock: {
            fault: { kind: 'http', status: 429, body: 'x', headers: { 'retry-after': '200' } },
          },
        },
      ],
      { clock },
    );
    await harness.post(rpc('getSlot'));
    clock.advance(10_000);
    harness.mocks.only!.setBehaviour({ fault: { kind: 'invalid_json' } });
    await harness.post(rpc('getSlot')); // fail-open dials it; a plain failure asks for only 5 s
    expect(harness.mocks.only!.stats().requests).toBe(2);
    expect(penaltyLeft(harness, 'only')).toBe(190);
  });

  it('fails open when every node is penalized, and a success clears the penalty', async () => {
    harness = await startHarness(
      [{ name: 'only', mock: { failFirst: 1, fault: { kind: 'http', status: 503, body: '{}' } } }],
      { clock },
    );
    expect((await harness.post(rpc('getSlot'))).status).toBe(503);
    expect((await harness.health()).status).toBe('critical');
    const response = await harness.post(rpc('getSlot'));
    expect(response.status).toBe(200);
    const health = await harness.health();
    expect(health.status).toBe('ok');
    expect(health.nodes[0]!.status).toBe('up');
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_skips_total\{node="only",reason="penalized"\} 1/,
    );
  });

  it('skips a penalized node while another is healthy', async () => {
    harness = await startHarness(
      [
        { name: 'first', tier: 0, mock: { failFirst: 1, fault: { kind: 'close' } } },
        { name: 'second', tier: 1 },
      ],
      { clock },
    );
    await harness.post(rpc('getSlot'));
    await harness.post(rpc('getSlot'));
    expect(harness.mocks.first!.stats().requests).toBe(1);
    expect(harness.mocks.second!.stats().requests).toBe(2);
  });
});
