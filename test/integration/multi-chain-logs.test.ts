/**
 * The client-facing `max_logs_block_range` is a chain's own (issues 28 + 29): written in a
 * `[[chains]]` table it refuses wide eth_getLogs on that chain only, before any node is asked,
 * and a reload that changes it applies at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startMultiChain, type ChainSpec, type MultiChain } from '../support/multi-chain.js';

let harness: MultiChain | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const NO_CACHE = '[cache]\nenabled = false\ncoalesce = false\n';
const getLogs = (blocks: number) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'eth_getLogs',
  params: [{ fromBlock: '0x1', toBlock: `0x${blocks.toString(16)}` }],
});
const chains = (ethLimit: number): ChainSpec[] => [
  { name: 'eth', toml: `max_logs_block_range = ${ethLimit}`, nodes: [{ name: 'eth1' }] },
  { name: 'base', nodes: [{ name: 'base1' }] },
];

describe('max_logs_block_range per chain', () => {
  it("refuses a range over the chain's own limit, not the other chain's, and follows a reload", async () => {
    harness = await startMultiChain(chains(1000), { top: NO_CACHE });
    const h = harness;
    const refused = await h.post('/eth', getLogs(5000));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(JSON.stringify(refused.json)).toContain('limit of 1,000 blocks (max_logs_block_range)');
    expect(h.mocks.eth1!.stats().requests).toBe(0);

    const other = await h.post('/base', getLogs(5000));
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ id: 7, result: expect.any(Array) });
    expect(h.mocks.base1!.stats().byMethod.eth_getLogs).toBe(1);

    h.rewrite(chains(10_000), NO_CACHE);
    expect(h.cascade.reload().ok).toBe(true);
    const served = await h.post('/eth', getLogs(5000));
    expect(served.status).toBe(200);
    expect(served.json).toMatchObject({ id: 7, result: expect.any(Array) });
    expect(h.mocks.eth1!.stats().byMethod.eth_getLogs).toBe(1);
  });
});
