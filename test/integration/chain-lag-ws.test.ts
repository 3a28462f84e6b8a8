/**
 * Lag-aware routing for JSON-RPC requests over a WebSocket (issue 26): the same engine as
 * HTTP, so a node 200 slots behind never answers a getSlot while a fresh node can.
 */
import { describe, expect, it } from 'vitest';
import { Family, Level, headSlot } from '../../src/core/chain/chain-state.js';
import { useWsHarness } from '../support/ws-harness.js';

const FINALIZED = headSlot(Family.solana, Level.finalized);
const ws = useWsHarness();

describe('lag-aware routing over a WebSocket', () => {
  it('answers getSlot at the fresh head once both heads are known', async () => {
    const h = await ws.start(
      [
        { name: 'fast', mock: { lag: 200 } },
        { name: 'fresh', mock: { delayMs: 5 } },
      ],
      { server: { chain: { maxLag: [50, 4], headMaxAgeSeconds: 60, headSamplePercent: 50 } } },
    );
    const client = await ws.open();
    const topology = h.cascade.server.topology;
    const fast = topology.node('fast')!;
    // Sampling sends a share of the reads to the node whose head is unknown.
    for (
      let i = 0;
      i < 20 && topology.chain.lagOf(fast.heads, FINALIZED, performance.now()) < 0;
      i++
    ) {
      await client.call('getSlot');
    }
    expect(topology.chain.lagOf(fast.heads, FINALIZED, performance.now())).toBe(200);
    const head = h.chain.slot();
    for (let i = 0; i < 50; i++) expect((await client.call('getSlot')).result).toBe(head);
    client.close();
  });
});
