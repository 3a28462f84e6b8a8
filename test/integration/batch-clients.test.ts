/** Real client libraries sending JSON-RPC batches through cascade. */
import { describe, expect, it } from 'vitest';
import { createPublicClient, http } from 'viem';
import { mainnet } from 'viem/chains';
import { JsonRpcProvider } from 'ethers';
import { useHarness } from '../support/use-harness.js';

const start = useHarness();

describe('real clients batching through cascade', () => {
  it('viem with batch: true', async () => {
    const harness = await start([{ name: 'n' }]);
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
    const harness = await start([{ name: 'n' }]);
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
