/**
 * Refusals before routing through both doors (serving/refusal.ts): the same bad input gets the
 * same JSON-RPC error text — code, message and id exactly as the client wrote it — and counts
 * the same, in `rpc_requests_total` and in the shutdown summary, over HTTP and over a socket —
 * as a routed socket request counts in the summary too (serving/request-record.ts).
 */
import { describe, expect, it } from 'vitest';
import type { WsTestClient } from '../support/ws-client.js';
import { useWsHarness, type WsHarness } from '../support/ws-harness.js';

const ws = useWsHarness();

/** The bad inputs, with the error every door answers them with. */
const CASES: ReadonlyArray<{ name: string; body: string; answer: string }> = [
  {
    name: 'a body that is not JSON',
    body: '{"jsonrpc":"2.0",',
    answer: '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}',
  },
  {
    name: 'an object with no method, its id beyond 2^53 echoed as written',
    body: '{"jsonrpc":"2.0","id":12345678901234567890123}',
    answer:
      '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":12345678901234567890123}',
  },
  {
    name: 'an empty batch',
    body: '[]',
    answer: '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}',
  },
  {
    name: 'a batch over max_batch_size',
    body: JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getSlot' }))),
    answer:
      '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Batch of 3 requests exceeds the limit of 2 (server.max_batch_size)"},"id":null}',
  },
];

/** The text of the next message the socket receives after sending `body`. */
function socketAnswer(client: WsTestClient, body: string): Promise<string> {
  return new Promise((resolve) => {
    client.ws.once('message', (data: Buffer) => resolve(data.toString('utf8')));
    client.ws.send(body);
  });
}

async function badRequests(harness: WsHarness): Promise<number> {
  const text = await harness.metrics();
  const line = /^rpc_requests_total\{outcome="bad_request"\} (\d+)$/m.exec(text);
  return Number(line?.[1] ?? NaN);
}

describe('refusals before routing, through both doors', () => {
  it.each(CASES)(
    '$name: the same error text and the same count over HTTP and a socket',
    async ({ body, answer }) => {
      const harness = await ws.start([{ name: 'a' }], { server: { maxBatchSize: 2 } });
      const client = await ws.open();

      const http = await fetch(harness.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(http.status).toBe(400);
      expect(await http.text()).toBe(answer);
      expect(await badRequests(harness)).toBe(1);
      expect(harness.cascade.server.requestCounts().bad_request).toBe(1);

      expect(await socketAnswer(client, body)).toBe(answer);
      expect(await badRequests(harness)).toBe(2);
      expect(harness.cascade.server.requestCounts()).toMatchObject({
        bad_request: 2,
        forwarded: 0,
      });
    },
  );

  it('a routed socket request counts in the shutdown summary as an HTTP one does', async () => {
    const harness = await ws.start([{ name: 'a' }]);
    const client = await ws.open();
    const answer = await client.call('getSlot');
    expect(typeof answer.result).toBe('number');
    expect(harness.cascade.server.requestCounts()).toMatchObject({ forwarded: 1, bad_request: 0 });
  });
});

/** The answer to `body` over HTTP (status 200: a batch is answered element by element). */
async function httpAnswer(harness: WsHarness, body: string): Promise<string> {
  const response = await fetch(harness.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(response.status).toBe(200);
  return response.text();
}

describe('batch element ids, as written, through both doors', () => {
  it('answers invalid elements -32600 with each id exactly as the client wrote it', async () => {
    const harness = await ws.start([{ name: 'a' }]);
    const client = await ws.open();
    const body =
      '[{"jsonrpc":"2.0","id":12345678901234567890,"method":7},' +
      '{"jsonrpc":"2.0","id":"a\\u0041","method":7},{"id":1.50,"method":7}]';
    const invalid = (id: string): string =>
      `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":${id}}`;
    const answer = `[${invalid('12345678901234567890')},${invalid('"a\\u0041"')},${invalid('1.50')}]`;
    expect(await httpAnswer(harness, body)).toBe(answer);
    expect(await socketAnswer(client, body)).toBe(answer);
  });

  it.each([308, 309, 400])(
    'keeps a numeric id of %i digits on a successful element answer',
    async (digits) => {
      const harness = await ws.start([{ name: 'a' }]);
      const client = await ws.open();
      const id = '9'.repeat(digits);
      const body = `[{"jsonrpc":"2.0","id":${id},"method":"getHealth"},{"jsonrpc":"2.0","id":2,"method":"getHealth"}]`;
      for (const text of [await httpAnswer(harness, body), await socketAnswer(client, body)]) {
        const answers = text.slice(1, -1).split('},{');
        expect(answers).toHaveLength(2);
        expect(answers[0]).toContain('"result":"ok"');
        expect(answers[0]).toMatch(new RegExp(`"id":${id}(\\}|,|$)`));
        expect(text).not.toContain('"id":null');
      }
    },
  );
});
