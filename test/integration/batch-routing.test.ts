/**
 * JSON-RPC batches across the fleet: what each element costs, which node serves it, and which
 * elements are retried elsewhere when a node's answer lets them down.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { postBatch } from '../support/batch-post.js';
import { rpc } from '../support/proxy-harness.js';
import { pointAt, startUpstream } from '../support/upstreams.js';
import { useHarness } from '../support/use-harness.js';

const start = useHarness();

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
    const harness = await start([
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
    const harness = await start(
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

  it('gives an element no node can serve its own error while the others succeed', async () => {
    const harness = await start([{ name: 'n', prices: { getSlot: 1 }, unknownCost: null }]);
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
    const harness = await start(
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
    const harness = await start([
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

  it('retries the whole sub-batch when the upstream answers a non-array', async () => {
    const harness = await start([
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
    const harness = await start(
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
