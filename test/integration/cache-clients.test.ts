import { Connection, Keypair } from '@solana/web3.js';
import { JsonRpcProvider, Network } from 'ethers';
import { createPublicClient, http } from 'viem';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { CacheConfig } from '../../src/core/config/types.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const CACHE: CacheConfig = {
  enabled: true,
  coalesce: true,
  maxBytes: 8 << 20,
  maxEntryBytes: 256 * 1024,
  ttlMs: 400,
  evmFinalityDepth: undefined,
  responseHeader: false,
  methods: new Map(),
};

/** A proxy with the cache on in front of one mock node; its clock stands still (no TTL expiry). */
async function start(): Promise<Harness> {
  harness = await startHarness([{ name: 'a' }], { clock: new ManualClock(1000), cache: CACHE });
  return harness;
}

function upstreamCalls(h: Harness, method: string): number {
  return h.mocks.a!.stats().byMethod[method] ?? 0;
}

describe('real clients get correct answers from the cache', () => {
  it('@solana/web3.js: genesis hash, slot and a finalized transaction', async () => {
    const h = await start();
    const connection = new Connection(h.url, 'finalized');
    const genesis = await connection.getGenesisHash();
    expect(await connection.getGenesisHash()).toBe(genesis);
    expect(upstreamCalls(h, 'getGenesisHash')).toBe(1);
    const slot = await connection.getSlot();
    expect(await connection.getSlot()).toBe(slot);
    expect(upstreamCalls(h, 'getSlot')).toBe(1);
    const owner = Keypair.generate().publicKey;
    const [signature] = await connection.getSignaturesForAddress(owner, { limit: 1 });
    const options = { maxSupportedTransactionVersion: 0 } as const;
    const tx = await connection.getTransaction(signature!.signature, options);
    const again = await connection.getTransaction(signature!.signature, options);
    expect(tx?.meta?.fee).toBe(5000);
    expect(again).toEqual(tx);
    expect(upstreamCalls(h, 'getTransaction')).toBe(1);
  });

  it('viem: chain id and a block below the finalized head', async () => {
    const h = await start();
    const first = createPublicClient({ transport: http(h.url) });
    const second = createPublicClient({ transport: http(h.url) });
    expect(await first.getChainId()).toBe(1);
    expect(await second.getChainId()).toBe(1);
    expect(upstreamCalls(h, 'eth_chainId')).toBe(1);
    // The finalized head comes from the traffic: a client asking for the finalized block.
    const finalized = await first.getBlock({ blockTag: 'finalized' });
    const blockNumber = finalized.number - 5n;
    const block = await first.getBlock({ blockNumber });
    const cached = await second.getBlock({ blockNumber });
    expect(cached).toEqual(block);
    expect(cached.number).toBe(blockNumber);
    expect(upstreamCalls(h, 'eth_getBlockByNumber')).toBe(2);
  });

  it('ethers: batched requests answered from the cache element by element', async () => {
    const h = await start();
    const network = Network.from(1);
    const provider = new JsonRpcProvider(h.url, network, { staticNetwork: network });
    try {
      const finalized = await provider.getBlock('finalized');
      const n = finalized!.number - 3;
      const [block, chainId] = await Promise.all([
        provider.getBlock(n),
        provider.send('eth_chainId', []),
      ]);
      const [again, chainAgain] = await Promise.all([
        provider.getBlock(n),
        provider.send('eth_chainId', []),
      ]);
      expect(again?.hash).toBe(block?.hash);
      expect(again?.number).toBe(n);
      expect([chainId, chainAgain]).toEqual(['0x1', '0x1']);
      expect(upstreamCalls(h, 'eth_getBlockByNumber')).toBe(2);
      expect(upstreamCalls(h, 'eth_chainId')).toBe(1);
    } finally {
      provider.destroy();
    }
  });
});
