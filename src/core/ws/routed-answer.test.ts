import { describe, expect, it } from 'vitest';
import { RequestOutcome } from '../metrics.js';
import { UpstreamStream, type UpstreamControl } from '../node/upstream-stream.js';
import { ERROR_MESSAGE } from '../protocol/error-body.js';
import type { RouteResult } from '../routing/route-context.js';
import { answerOf } from './routed-answer.js';

const IDLE: UpstreamControl = { pause() {}, resume() {}, abort() {} };

function answer(body: Buffer | UpstreamStream, status = 200): RouteResult {
  return {
    kind: 'answer',
    status,
    contentType: undefined,
    body,
    node: 'a',
    attempts: 1,
    credits: 4,
  };
}

describe('answerOf: a route result as one WebSocket message', () => {
  it("relays the node's bytes and counts the request as forwarded", async () => {
    const body = Buffer.from('{"jsonrpc":"2.0","id":"x","result":1}');
    expect(await answerOf(answer(body), '"x"')).toEqual({
      body,
      outcome: RequestOutcome.forwarded,
      node: 'a',
      credits: 4,
    });
  });

  it('collects an answer HTTP would stream into one message', async () => {
    const stream = new UpstreamStream(IDLE, Buffer.from('{"jsonrpc":"2.0","id":1,'));
    const message = answerOf(answer(stream), '1');
    stream.push(Buffer.from('"result":"big"}'));
    stream.end();
    const { body, outcome } = await message;
    expect(body.toString()).toBe('{"jsonrpc":"2.0","id":1,"result":"big"}');
    expect(outcome).toBe(RequestOutcome.forwarded);
  });

  it("gives HTTP's failures as the same JSON-RPC error, with the client's id", async () => {
    const timedOut = await answerOf({ kind: 'timeout', attempts: 2, credits: 1 }, '7');
    expect(JSON.parse(timedOut.body.toString())).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: ERROR_MESSAGE.globalTimeout },
      id: 7,
    });
    expect(timedOut.outcome).toBe(RequestOutcome.timeout);
    const broken = new UpstreamStream(IDLE, Buffer.from('{"result":'));
    broken.fail(new Error('upstream body broke'));
    const cut = await answerOf(answer(broken), '8');
    expect(JSON.parse(cut.body.toString()).error.message).toBe(ERROR_MESSAGE.allFailed);
    expect(cut.outcome).toBe(RequestOutcome.badGateway);
  });

  it('turns an error page (no status line on a socket) into an error naming the status', async () => {
    const page = await answerOf(answer(Buffer.from('<html>Bad Gateway</html>'), 502), '"p"');
    expect(JSON.parse(page.body.toString())).toMatchObject({
      error: { code: -32000, message: 'Upstream answered HTTP 502 without a JSON-RPC body' },
      id: 'p',
    });
    // The node answered, finally: counted as HTTP counts the page it relays (forwarded).
    expect(page).toMatchObject({ outcome: RequestOutcome.forwarded, node: undefined });
  });

  it("gives a non-2xx answer the client's id: a socket has no status line to tie it", async () => {
    const denied = await answerOf(answer(Buffer.from('{"message":"invalid api key"}'), 401), '9');
    expect(JSON.parse(denied.body.toString())).toEqual({ message: 'invalid api key', id: 9 });
    const big = '12345678901234567890';
    const refused = Buffer.from(
      '{"jsonrpc":"2.0","error":{"code":-32052,"message":"API key is not allowed"},"id":null}',
    );
    const relabelled = await answerOf(answer(refused, 403), big);
    expect(relabelled.body.toString()).toBe(
      `{"jsonrpc":"2.0","error":{"code":-32052,"message":"API key is not allowed"},"id":${big}}`,
    );
    expect(relabelled).toMatchObject({ outcome: RequestOutcome.forwarded, node: 'a', credits: 4 });
    // A 2xx answer is the node's own bytes, untouched.
    const ok = Buffer.from('{"jsonrpc":"2.0","id":null,"result":1}');
    expect((await answerOf(answer(ok), '3')).body).toBe(ok);
  });
});
