/**
 * What a client gets back for a JSON-RPC batch: order and ids, notifications, invalid elements,
 * the size limit, and bytes relayed untouched.
 */
import { describe, expect, it } from 'vitest';
import { postBatch } from '../support/batch-post.js';
import { rpc } from '../support/proxy-harness.js';
import { pointAt, startUpstream } from '../support/upstreams.js';
import { useHarness } from '../support/use-harness.js';

const start = useHarness();

describe('JSON-RPC batches', () => {
  it('keeps order and ids, including duplicate and string ids', async () => {
    const harness = await start([{ name: 'n' }]);
    const { answers } = await postBatch(harness, [
      rpc('getSlot', 'b'),
      rpc('getSlot', 7),
      rpc('getSlot', 7),
      rpc('getHealth', null),
    ]);
    expect(answers.map((a) => a.id)).toEqual(['b', 7, 7, null]);
    expect(answers[3]!.result).toBe('ok');
  });

  it('forwards notifications without answering them; a batch of only notifications gets 204', async () => {
    const harness = await start([{ name: 'n' }]);
    const mixed = await postBatch(harness, [
      { jsonrpc: '2.0', method: 'getSlot' },
      rpc('getHealth', 1),
    ]);
    expect(mixed.answers).toHaveLength(1);
    expect(mixed.answers[0]!.id).toBe(1);
    const onlyNotifications = await harness.post([
      { jsonrpc: '2.0', method: 'getSlot' },
      { jsonrpc: '2.0', method: 'getHealth' },
    ]);
    // JSON-RPC 2.0 §6: nothing is returned for a batch of notifications — 204, no body.
    expect(onlyNotifications.status).toBe(204);
    expect(onlyNotifications.body).toBe('');
    expect(onlyNotifications.contentType).toBeNull();
    expect(harness.mocks.n!.stats().byMethod.getSlot).toBe(2);
    // Delivered, so served: counted forwarded like the mixed batch, never as a failure.
    const text = await harness.metrics();
    expect(text).toMatch(/rpc_requests_total\{outcome="forwarded"\} 2/);
    expect(text).not.toMatch(/rpc_requests_total\{outcome="bad_gateway"\} [1-9]/);
  });

  it('answers [] with a single -32600 error object', async () => {
    const harness = await start([{ name: 'n' }]);
    const response = await harness.post('[]');
    expect(response.json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request' },
      id: null,
    });
    expect(harness.mocks.n!.stats().requests).toBe(0);
  });

  it('refuses a batch over max_batch_size with one error naming the limit', async () => {
    const harness = await start([{ name: 'n' }], { server: { maxBatchSize: 3 } });
    const response = await harness.post([1, 2, 3, 4].map((id) => rpc('getSlot', id)));
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      error: { code: -32600, message: expect.stringContaining('limit of 3') },
      id: null,
    });
  });

  it('answers non-object and method-less elements with -32600 in their slot while the rest succeed', async () => {
    const harness = await start([{ name: 'n' }]);
    const { answers } = await postBatch(harness, [
      rpc('getSlot', 1),
      5,
      { jsonrpc: '2.0', id: 9 },
      rpc('getHealth', 2),
    ]);
    expect(answers).toHaveLength(4);
    expect(answers[0]!.result).toBeDefined();
    expect(answers[1]).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request' },
      id: null,
    });
    expect(answers[2]).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request' },
      id: 9,
    });
    expect(answers[3]!.result).toBe('ok');
  });

  it("keeps numbers beyond 2^53 and the client's spelling intact both ways", async () => {
    // Lamport amounts and supplies exceed 2^53; a parse/re-serialise round trip would change them.
    const seen: string[] = [];
    const url = await startUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(Buffer.concat(chunks).toString());
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          '[{"jsonrpc":"2.0","id":1,"result":{"value":18446744073709551615}},' +
            '{"jsonrpc":"2.0","result":{"total":576460752303423487,"ratio":1.50},"id":0}]',
        );
      });
    });
    const harness = await start([{ name: 'exact', tier: 0 }]);
    pointAt(harness, 'exact', url);
    const body =
      '[{"jsonrpc":"2.0","id":9007199254740993,"method":"getSupply","params":[{"minContextSlot":9007199254740995}]},\n' +
      ' {"jsonrpc":"2.0","method":"getBalance","params":["x",{"minContextSlot":1.0}],"id":"b\\u0031"}]';
    const response = await harness.post(body);
    expect(response.status).toBe(200);
    // Upstream: the client's bytes, only the ids rewritten to 0..n-1.
    expect(seen).toEqual([
      '[{"jsonrpc":"2.0","id":0,"method":"getSupply","params":[{"minContextSlot":9007199254740995}]},' +
        '{"jsonrpc":"2.0","method":"getBalance","params":["x",{"minContextSlot":1.0}],"id":1}]',
    ]);
    // Client: the node's bytes, in request order, with the client's id text back.
    expect(response.body).toBe(
      '[{"jsonrpc":"2.0","result":{"total":576460752303423487,"ratio":1.50},"id":9007199254740993},' +
        '{"jsonrpc":"2.0","id":"b\\u0031","result":{"value":18446744073709551615}}]',
    );
  });
});
