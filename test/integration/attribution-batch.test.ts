/** Whose fault an upstream's error is, element by element of a JSON-RPC batch. */
import { describe, expect, it } from 'vitest';
import { states } from '../support/error-answers.js';
import { rpc } from '../support/proxy-harness.js';
import { pointAt, startUpstream } from '../support/upstreams.js';
import { useHarness } from '../support/use-harness.js';

const start = useHarness();

describe('batches follow the same rules per element', () => {
  /** An upstream answering eth_call with a revert and eth_getBalance with a node-state error. */
  function picky(): Promise<string> {
    return startUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const calls = JSON.parse(Buffer.concat(chunks).toString()) as Array<{
          id: number;
          method: string;
        }>;
        const answers = (Array.isArray(calls) ? calls : [calls]).map(({ id, method }) =>
          method === 'eth_call'
            ? { jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted', data: '0x' } }
            : method === 'eth_getBalance'
              ? { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } }
              : { jsonrpc: '2.0', id, result: '0x1' },
        );
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(calls) ? answers : answers[0]));
      });
    });
  }

  it('relays an element’s deterministic error, retries its node-state error elsewhere', async () => {
    const h = await start([
      { name: 'a', tier: 0 },
      { name: 'b', tier: 1 },
    ]);
    pointAt(h, 'a', await picky());
    const answer = await h.post([
      rpc('eth_call', 1),
      rpc('eth_getBalance', 2, ['0x0000000000000000000000000000000000000001', 'latest']),
      rpc('eth_blockNumber', 3),
    ]);
    const answers = answer.json as Array<{
      id: number;
      error?: { code: number };
      result?: unknown;
    }>;
    expect(answers[0]).toMatchObject({ id: 1, error: { code: 3 } });
    expect(answers[1]!.result).toBeDefined();
    expect(answers[2]!.result).toBeDefined();
    expect(h.mocks.b!.stats().byMethod).toEqual({ eth_getBalance: 1 });
    // Not penalized (an answer with an error in it is not a measurement either).
    expect(await states(h)).toEqual({ a: 'unknown', b: 'up' });
  });

  it('a node refusing batches is not penalized; its elements go one per attempt', async () => {
    const h = await start([{ name: 'a', tier: 0 }]);
    const seen: string[] = [];
    const url = await startUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        seen.push(text.startsWith('[') ? 'batch' : 'single');
        const call = JSON.parse(text) as { id: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          text.startsWith('[')
            ? '{"jsonrpc":"2.0","error":{"code":-32600,"message":"batch requests are not supported"},"id":null}'
            : JSON.stringify({ jsonrpc: '2.0', id: call.id, result: 42 }),
        );
      });
    });
    pointAt(h, 'a', url);
    const answer = await h.post([rpc('getSlot', 1), rpc('getSlot', 2)]);
    expect(answer.json).toEqual([
      { jsonrpc: '2.0', id: 1, result: 42 },
      { jsonrpc: '2.0', id: 2, result: 42 },
    ]);
    expect(seen[0]).toBe('batch');
    expect(seen.slice(1)).toEqual(['single', 'single']);
    expect((await states(h)).a).toBe('up');
  });
});
