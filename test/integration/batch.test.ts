import { afterEach, describe, expect, it } from 'vitest';
import { createPublicClient, http } from 'viem';
import { mainnet } from 'viem/chains';
import { JsonRpcProvider } from 'ethers';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

type Answer = { id: unknown; result?: unknown; error?: { code: number; message: string } };

async function postBatch(
  h: Harness,
  body: unknown,
): Promise<{ status: number; answers: Answer[]; raw: string }> {
  const response = await h.post(body);
  return { status: response.status, answers: response.json as Answer[], raw: response.body };
}

/**
 * A hand-written upstream for answers the mocks don't give: `answer(elements)` returns the JSON
 * array to send for a batch (or anything else).
 */
function customUpstream(
  answer: (elements: Array<{ id?: unknown; method: string }>) => unknown,
): Promise<string> {
  return startUpstream((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
      const elements = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{
        id?: unknown;
        method: string;
      }>;
      const body = answer(elements);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(parsed) ? body : (body as unknown[])[0]));
    });
  });
}

const ok = (e: { id?: unknown }) => ({ jsonrpc: '2.0', id: e.id, result: 'custom' });

describe('JSON-RPC batches', () => {
  it('prices every element on its own and books the sum', async () => {
    harness = await startHarness([
      { name: 'n', prices: { getSlot: 1, getBalance: 5, getBlock: 40 } },
    ]);
    const { status, answers } = await postBatch(harness, [
      rpc('getSlot', 1),
      rpc('getBalance', 2),
      rpc('getBlock', 3, [1]),
    ]);
    expect(status).toBe(200);
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(harness.ledger.counter('n').used).toBe(46);
    // One upstream request carried all three.
    expect(harness.mocks.n!.stats().requests).toBe(1);
    expect(await harness.metrics()).toMatch(/rpc_batch_size_count 1/);
  });

  it('spreads elements across tiers when tier 0 runs out of tokens mid-batch', async () => {
    // The proxy's clock stands still: premium earns no token while the batch is routed.
    harness = await startHarness(
      [
        { name: 'premium', tier: 0, rpsLimit: 2 },
        { name: 'backup', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    const batch = [1, 2, 3, 4, 5].map((id) => rpc('getSlot', id));
    const { answers } = await postBatch(harness, batch);
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    expect(answers.every((a) => a.result !== undefined)).toBe(true);
    expect(harness.mocks.premium!.stats()).toMatchObject({ requests: 1, byMethod: { getSlot: 2 } });
    expect(harness.mocks.backup!.stats()).toMatchObject({ requests: 1, byMethod: { getSlot: 3 } });
  });

  it('keeps order and ids, including duplicate and string ids', async () => {
    harness = await startHarness([{ name: 'n' }]);
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
    harness = await startHarness([{ name: 'n' }]);
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
  });

  it('answers [] with a single -32600 error object', async () => {
    harness = await startHarness([{ name: 'n' }]);
    const response = await harness.post('[]');
    expect(response.json).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request' },
      id: null,
    });
    expect(harness.mocks.n!.stats().requests).toBe(0);
  });

  it('refuses a batch over max_batch_size with one error naming the limit', async () => {
    harness = await startHarness([{ name: 'n' }], { server: { maxBatchSize: 3 } });
    const response = await harness.post([1, 2, 3, 4].map((id) => rpc('getSlot', id)));
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      error: { code: -32600, message: expect.stringContaining('limit of 3') },
      id: null,
    });
  });

  it('answers non-object and method-less elements with -32600 in their slot while the rest succeed', async () => {
    harness = await startHarness([{ name: 'n' }]);
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

  it('gives an element no node can serve its own error while the others succeed', async () => {
    harness = await startHarness([{ name: 'n', prices: { getSlot: 1 }, unknownCost: null }]);
    const { status, answers } = await postBatch(harness, [rpc('getSlot', 1), rpc('getBalance', 2)]);
    expect(status).toBe(200);
    expect(answers[0]!.result).toBeDefined();
    expect(answers[1]).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32000,
        message: 'All nodes failed with server/network errors (no rate limits to wait for)',
      },
      id: 2,
    });
  });

  it('retries only the element a node answered with a server error, on the next node', async () => {
    const url = await customUpstream((elements) =>
      elements.map((e) =>
        e.method === 'getBlockHeight'
          ? { jsonrpc: '2.0', id: e.id, error: { code: -32005, message: 'busy' } }
          : ok(e),
      ),
    );
    harness = await startHarness(
      [
        { name: 'custom', tier: 0 },
        { name: 'mock', tier: 1 },
      ],
      {},
    );
    pointAt(harness, 'custom', url);
    const { answers } = await postBatch(harness, [
      rpc('getSlot', 1),
      rpc('getBlockHeight', 2),
      rpc('getHealth', 3),
    ]);
    expect(answers.map((a) => a.result)).toEqual(['custom', expect.anything(), 'custom']);
    expect(answers[1]!.result).not.toBe('custom');
    expect(harness.mocks.mock!.stats().byMethod).toEqual({ getBlockHeight: 1 });
    expect((await harness.health()).nodes.find((n) => n.name === 'custom')!.status).toBe('down');
  });

  it('treats missing ids in a batch answer as invalid for those elements only', async () => {
    const url = await customUpstream((elements) =>
      elements.filter((e) => e.method !== 'getBlockHeight').map(ok),
    );
    harness = await startHarness([
      { name: 'custom', tier: 0 },
      { name: 'mock', tier: 1 },
    ]);
    pointAt(harness, 'custom', url);
    const { answers } = await postBatch(harness, [rpc('getSlot', 1), rpc('getBlockHeight', 2)]);
    expect(answers[0]!.result).toBe('custom');
    expect(answers[1]!.result).toBeDefined();
    expect(harness.mocks.mock!.stats().byMethod).toEqual({ getBlockHeight: 1 });
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_attempts_total\{node="custom",outcome="invalid_json"\} 1/,
    );
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
    harness = await startHarness([{ name: 'exact', tier: 0 }]);
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

  it('retries the whole sub-batch when the upstream answers a non-array', async () => {
    harness = await startHarness([
      { name: 'bad', tier: 0, mock: { fault: { kind: 'rpc_error', code: -32603 } } },
      { name: 'good', tier: 1 },
    ]);
    const { answers } = await postBatch(harness, [rpc('getSlot', 1), rpc('getSlot', 2)]);
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers.every((a) => a.result !== undefined)).toBe(true);
    expect(harness.mocks.good!.stats().byMethod).toEqual({ getSlot: 2 });
    expect((await harness.health()).nodes[0]!.status).toBe('down');
  });

  it('counts the HTTP request once and each upstream sub-request as an attempt', async () => {
    harness = await startHarness(
      [
        { name: 'premium', tier: 0, rpsLimit: 1 },
        { name: 'backup', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    await postBatch(harness, [rpc('getSlot', 1), rpc('getSlot', 2), rpc('getSlot', 3)]);
    const text = await harness.metrics();
    expect(text).toMatch(/rpc_requests_total\{outcome="forwarded"\} 1/);
    expect(text).toMatch(/rpc_upstream_attempts_total\{node="premium",outcome="success"\} 1/);
    expect(text).toMatch(/rpc_upstream_attempts_total\{node="backup",outcome="success"\} 1/);
  });
});

describe('real clients batching through cascade', () => {
  it('viem with batch: true', async () => {
    harness = await startHarness([{ name: 'n' }]);
    const client = createPublicClient({
      chain: mainnet,
      transport: http(harness.url, { batch: true }),
    });
    const [block, chain, gas] = await Promise.all([
      client.getBlockNumber(),
      client.getChainId(),
      client.getGasPrice(),
    ]);
    expect(block).toBeGreaterThan(0n);
    expect(chain).toBe(1);
    expect(gas).toBeGreaterThan(0n);
    expect(harness.mocks.n!.stats().requests).toBe(1);
  });

  it('ethers JsonRpcProvider batching', async () => {
    harness = await startHarness([{ name: 'n' }]);
    const provider = new JsonRpcProvider(harness.url, 1, {
      staticNetwork: true,
      batchMaxCount: 10,
    });
    const [block, balance] = await Promise.all([
      provider.getBlockNumber(),
      provider.getBalance('0x0000000000000000000000000000000000000001'),
    ]);
    expect(block).toBeGreaterThan(0);
    expect(balance).toBeGreaterThanOrEqual(0n);
    provider.destroy();
  });
});
