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
    harness = await startMultiChain(chains(100), { top: NO_CACHE });
    const h = harness;
    const refused = await h.post('/eth', getLogs(500));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(JSON.stringify(refused.json)).toContain('limit of 100 blocks (max_logs_block_range)');
    expect(h.mocks.eth1!.stats().requests).toBe(0);

    const other = await h.post('/base', getLogs(500));
    expect(other.status).toBe(200);
    expect(other.json).toMatchObject({ id: 7, result: expect.any(Array) });
    expect(h.mocks.base1!.stats().byMethod.eth_getLogs).toBe(1);

    h.rewrite(chains(1000), NO_CACHE);
    expect(h.cascade.reload().ok).toBe(true);
    const served = await h.post('/eth', getLogs(500));
    expect(served.status).toBe(200);
    expect(served.json).toMatchObject({ id: 7, result: expect.any(Array) });
    expect(h.mocks.eth1!.stats().byMethod.eth_getLogs).toBe(1);
  });

  it("prices a split against the node's provider account, and refuses it when the pool cannot hold it", async () => {
    const top = `${NO_CACHE}[[accounts]]\nname = "plan"\nmonthly_limit = 40\nspillover_percent = 100\n`;
    const node = 'tier = 0\naccount = "plan"\nmax_logs_block_range = 100';
    harness = await startMultiChain(
      [
        { name: 'eth', nodes: [{ name: 'eth1', toml: node }] },
        { name: 'base', nodes: [{ name: 'base1', toml: node }] },
      ],
      { top },
    );
    const h = harness;
    // 1,000 blocks: 10 queries of 100, 10 credits of the account's 40.
    const first = await h.post('/eth', getLogs(1000));
    expect(first.status).toBe(200);
    expect(h.mocks.eth1!.stats().byMethod.eth_getLogs).toBe(10);
    expect(h.cascade.server.topology.account('plan')!.usage.used).toBe(10);
    // 5,000 blocks on the other chain: 50 credits, and the shared pool has 30 left.
    const refused = await h.post('/base', getLogs(5000));
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ id: 7, error: { code: -32005 } });
    expect(JSON.stringify(refused.json)).toContain(
      "50 credits; its provider account 'plan' has 30 credits left before spillover (accounts.monthly_limit)",
    );
    expect(h.mocks.base1!.stats().requests).toBe(0);
    expect(h.cascade.server.topology.account('plan')!.usage.used).toBe(10);
  });
});
