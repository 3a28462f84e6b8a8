/**
 * Lag-aware routing seen from a client (issue 26): a fast node serving the chain 200 slots
 * behind and a slower fresh one. Heads come from the answers themselves (no probes); the chain
 * is a manual MockChain and the proxy runs on a ManualClock with latencies set by hand, so
 * nothing depends on how fast the machine is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Family, Level, headSlot } from '../../src/core/chain/chain-state.js';
import { ManualClock } from '../../src/core/clock.js';
import { MockChain } from '../../src/mock/index.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { metricValue } from '../support/routing-config.js';

const FINALIZED = headSlot(Family.solana, Level.finalized);
const PUBKEY = '11111111111111111111111111111111';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** `fast` (2 ms, `lag` behind) and `fresh` (50 ms) in one tier, on one manual chain. */
async function start(lag: number, extra: { name: string; lag: number }[] = []) {
  const chain = new MockChain({ manual: true });
  const nodes = [
    { name: 'fast', tier: 0, mock: { chain, lag } },
    { name: 'fresh', tier: 0, mock: { chain } },
    ...extra.map((node) => ({ name: node.name, tier: 0, mock: { chain, lag: node.lag } })),
  ];
  const h = await startHarness(nodes, {
    clock: new ManualClock(),
    server: {
      enableMetrics: true,
      chain: { maxLag: [300, 4], headMaxAgeSeconds: 60, headSamplePercent: 50 },
    },
  });
  harness = h;
  pinLatencies(h);
  return { h, chain };
}

/**
 * `fast` measured at 2 ms, the others at 50+ ms. On a ManualClock every answer measures 0 ms,
 * so tests pin the latencies again before a request whose node they check.
 */
function pinLatencies(h: Harness): void {
  const all = h.server.topology.table.all;
  for (let k = 0; k < 100; k++) all.forEach((node, i) => node.ema.observe(i === 0 ? 2 : 50 + i));
  h.server.topology.rank();
}

function resultOf(json: unknown): unknown {
  return (json as { result?: unknown }).result;
}

function contextSlotOf(json: unknown): number {
  return (resultOf(json) as { context: { slot: number } }).context.slot;
}

/** Sends getSlot until the proxy knows both heads (sampling: a few requests at most). */
async function learnHeads(h: Harness): Promise<void> {
  const chain = h.server.topology.chain;
  const fast = h.server.topology.node('fast')!;
  for (let i = 0; i < 10 && chain.lagOf(fast.heads, FINALIZED, 0) < 0; i++) {
    await h.post(rpc('getSlot'));
  }
  expect(chain.lagOf(fast.heads, FINALIZED, 0)).toBeGreaterThan(0);
}

const calls = (h: Harness, node: string, method: string): number =>
  h.mocks[node]!.stats().byMethod[method] ?? 0;

describe('lag-aware routing', () => {
  it('never relays a getSlot or getLatestBlockhash below the fresh head', async () => {
    const { h, chain } = await start(200);
    await learnHeads(h);
    const head = chain.slot();
    for (let i = 0; i < 200; i++) {
      const slot = await h.post(rpc('getSlot', i));
      expect(resultOf(slot.json)).toBe(head);
      const blockhash = await h.post(rpc('getLatestBlockhash', i));
      expect(contextSlotOf(blockhash.json)).toBe(head);
    }
    // A batch's elements are admitted by the same rule.
    const batch = await h.post([1, 2, 3].map((id) => rpc('getSlot', id)));
    for (const element of batch.json as unknown[]) expect(resultOf(element)).toBe(head);
    // The lagging node still takes what its lag allows (max_lag 300 for state reads).
    pinLatencies(h);
    const balance = await h.post(rpc('getBalance', 7, [PUBKEY]));
    expect(contextSlotOf(balance.json)).toBe(head - 200);
    expect(calls(h, 'fast', 'getBalance')).toBe(1);

    const text = await h.metrics();
    // Every time the ranking put `fast` first (ranking ticks re-measure on real time).
    expect(
      metricValue(text, 'rpc_lag_skips_total', { node: 'fast', method: 'getSlot' }),
    ).toBeGreaterThan(0);
    expect(metricValue(text, 'rpc_node_lag', { node: 'fast' })).toBe(200);
    expect(metricValue(text, 'rpc_node_lag', { node: 'fresh' })).toBe(0);
    expect(metricValue(text, 'rpc_node_head', { node: 'fresh', commitment: 'finalized' })).toBe(
      head,
    );
    const health = (await h.health()) as unknown as {
      nodes: { name: string; status: string; lag?: number; head?: Record<string, number> }[];
    };
    const fast = health.nodes.find((node) => node.name === 'fast')!;
    expect(fast.lag).toBe(200);
    expect(fast.head).toEqual({ finalized: head - 200 });
    // Behind is not failing: no penalty.
    expect(fast.status).not.toBe('down');
  });

  it('applies a reloaded max_lag to the next request, raised or lowered', async () => {
    const { h, chain } = await start(200);
    await learnHeads(h);
    const head = chain.slot();
    const balance = async (id: number) => {
      pinLatencies(h);
      return contextSlotOf((await h.post(rpc('getBalance', id, [PUBKEY]))).json);
    };
    // max_lag 300: `fast` (200 behind) takes state reads.
    expect(await balance(1)).toBe(head - 200);
    const lagged = (maxLag: number) => ({
      ...h.server.config,
      server: {
        ...h.server.config.server,
        chain: { ...h.server.config.server.chain!, maxLag: [maxLag, 4] as const },
      },
    });
    h.server.reload(lagged(100));
    expect(await balance(2)).toBe(head);
    h.server.reload(lagged(1000));
    expect(await balance(3)).toBe(head - 200);
  });

  it('samples with batches too: a batch-only client shows the other node its head', async () => {
    const { h } = await start(200);
    const chain = h.server.topology.chain;
    const fast = h.server.topology.node('fast')!;
    for (let i = 0; i < 10 && chain.lagOf(fast.heads, FINALIZED, 0) < 0; i++) {
      pinLatencies(h);
      await h.post([1, 2, 3].map((id) => rpc('getSlot', id)));
    }
    expect(chain.lagOf(fast.heads, FINALIZED, 0)).toBe(200);
    expect(calls(h, 'fresh', 'getSlot')).toBeGreaterThan(0);
  });

  it('skips a node known below minContextSlot before spending credit on it', async () => {
    const { h, chain } = await start(200);
    await learnHeads(h);
    const before = calls(h, 'fast', 'getBalance');
    const answer = await h.post(
      rpc('getBalance', 1, [PUBKEY, { minContextSlot: chain.slot() - 100 }]),
    );
    expect(contextSlotOf(answer.json)).toBe(chain.slot());
    expect(calls(h, 'fast', 'getBalance')).toBe(before);
    const text = await h.metrics();
    expect(metricValue(text, 'rpc_lag_skips_total', { node: 'fast', method: 'getBalance' })).toBe(
      1,
    );
  });

  it('retries a -32016 on a fresher node with no penalty, and learns the head from it', async () => {
    const { h, chain } = await start(200);
    const answer = await h.post(
      rpc('getBalance', 1, [PUBKEY, { minContextSlot: chain.slot() - 100 }]),
    );
    expect(contextSlotOf(answer.json)).toBe(chain.slot());
    expect(h.mocks.fast!.stats().errorsByMethod.getBalance).toBe(1);
    const fast = h.server.topology.node('fast')!;
    expect(fast.penalty.isActive(0)).toBe(false);
    expect(h.server.topology.chain.headOf(fast.heads, FINALIZED, 0)).toBe(chain.slot() - 200);
  });

  it('retries a stale answer from a node that fell behind, without penalizing it', async () => {
    const { h, chain } = await start(0);
    const state = h.server.topology.chain;
    const fresh = h.server.topology.node('fresh')!;
    for (let i = 0; i < 10 && state.headOf(fresh.heads, FINALIZED, 0) < 0; i++) {
      await h.post(rpc('getSlot', i));
    }
    // The provider's balancer switches to a lagging replica.
    h.mocks.fast!.setBehaviour({ lag: 200 });
    pinLatencies(h);
    const before = calls(h, 'fast', 'getSlot');
    const answer = await h.post(rpc('getSlot', 99));
    expect(resultOf(answer.json)).toBe(chain.slot());
    expect(calls(h, 'fast', 'getSlot')).toBe(before + 1);
    const text = await h.metrics();
    expect(metricValue(text, 'rpc_stale_answers_total', { node: 'fast' })).toBe(1);
    expect(metricValue(text, 'rpc_stale_credits_total', { node: 'fast' })).toBe(1);
    expect(h.server.topology.node('fast')!.penalty.isActive(0)).toBe(false);
  });

  it('reopens stale batch elements for a fresher node, in the same batch', async () => {
    const { h, chain } = await start(0);
    const state = h.server.topology.chain;
    const fresh = h.server.topology.node('fresh')!;
    for (let i = 0; i < 10 && state.headOf(fresh.heads, FINALIZED, 0) < 0; i++) {
      await h.post(rpc('getSlot', i));
    }
    h.mocks.fast!.setBehaviour({ lag: 200 });
    pinLatencies(h);
    const before = calls(h, 'fast', 'getSlot');
    const batch = await h.post([1, 2, 3].map((id) => rpc('getSlot', id)));
    expect((batch.json as unknown[]).map(resultOf)).toEqual([
      chain.slot(),
      chain.slot(),
      chain.slot(),
    ]);
    expect(calls(h, 'fast', 'getSlot')).toBe(before + 3);
    const text = await h.metrics();
    expect(metricValue(text, 'rpc_stale_answers_total', { node: 'fast' })).toBe(3);
  });

  it('a node reporting a far future head does not push honest nodes out', async () => {
    const { h, chain } = await start(0, [{ name: 'liar', lag: -1_000_000 }]);
    for (let i = 0; i < 10; i++) await h.post(rpc('getSlot', i));
    const state = h.server.topology.chain;
    expect(state.headOf(h.server.topology.node('liar')!.heads, FINALIZED, 0)).toBe(
      chain.slot() + 1_000_000,
    );
    expect(state.chainHead(FINALIZED, 0)).toBe(chain.slot());
    const text = await h.metrics();
    expect(metricValue(text, 'rpc_lag_skips_total', {})).toBe(0);
    expect(metricValue(text, 'rpc_node_lag', { node: 'fast' })).toBe(0);
    expect(calls(h, 'fast', 'getSlot')).toBeGreaterThan(0);
  });

  it('sends no probe: a node without traffic gets no request at all', async () => {
    const { h } = await start(200);
    await h.health();
    await h.metrics();
    for (const mock of Object.values(h.mocks)) expect(mock.stats().requests).toBe(0);
    await h.post(rpc('getSlot'));
    const total = Object.values(h.mocks).reduce((sum, mock) => sum + mock.stats().requests, 0);
    expect(total).toBe(1);
  });

  it('probes only the node that sets head_probe_seconds, booked like any call', async () => {
    const chain = new MockChain({ manual: true });
    const h = await startHarness(
      [
        { name: 'quiet', tier: 0, mock: { chain } },
        { name: 'probed', tier: 0, headProbeSeconds: 30, mock: { chain } },
      ],
      { clock: new ManualClock() },
    );
    harness = h;
    await expect.poll(() => calls(h, 'probed', 'getSlot')).toBe(1);
    expect(h.mocks.quiet!.stats().requests).toBe(0);
    expect(h.server.topology.node('probed')!.usage.used).toBe(1);
    await expect
      .poll(() =>
        h.server.topology.chain.headOf(h.server.topology.node('probed')!.heads, FINALIZED, 0),
      )
      .toBe(chain.slot());
  });

  it('never uses a mock node on another chain (expect_chain = the mainnet genesis hash)', async () => {
    const chain = new MockChain({ manual: true });
    const h = await startHarness(
      [
        { name: 'devnet', tier: 0, mock: { chain, otherChain: true } },
        { name: 'mainnet', tier: 0, mock: { chain } },
      ],
      {
        clock: new ManualClock(),
        server: {
          chain: {
            maxLag: [50, 4],
            headMaxAgeSeconds: 60,
            headSamplePercent: 50,
            expectChain: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
          },
        },
      },
    );
    harness = h;
    for (let i = 0; i < 20; i++) expect((await h.post(rpc('getSlot', i))).status).toBe(200);
    expect(h.mocks.devnet!.stats().byMethod).toEqual({ getGenesisHash: 1 });
    expect(calls(h, 'mainnet', 'getSlot')).toBe(20);
    const health = (await h.health()) as unknown as {
      status: string;
      nodes: { name: string; wrong_chain?: boolean }[];
    };
    expect(health.status).toBe('degraded');
    expect(health.nodes[0]).toMatchObject({ name: 'devnet', wrong_chain: true });
  });
});
