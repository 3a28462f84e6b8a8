import { describe, expect, it } from 'vitest';
import type { WsTestClient } from '../support/ws-client.js';
import { until, type Json } from '../support/ws-client.js';
import { useWsHarness, type WsHarness } from '../support/ws-harness.js';

const ws = useWsHarness();

function open(): Promise<WsTestClient> {
  return ws.open();
}

const SIGNATURE = '3'.repeat(88);

function numbers(notes: Json[]): number[] {
  return notes.map((note) => Number.parseInt(note.params.result.number as string, 16));
}

/** Two nodes on one chain: a (tier 0) takes the subscriptions, b (tier 1) is the spare. */
function twoNodes(): Promise<WsHarness> {
  return ws.start([{ name: 'a' }, { name: 'b', tier: 1 }]);
}

describe('failover of subscriptions', () => {
  it.each(['drop', 'stall'] as const)(
    'keeps newHeads contiguous, unrepeated and under the same id when the node %ss',
    async (fault) => {
      const { chain, mocks } = await twoNodes();
      const client = await open();
      const { result: id } = await client.call('eth_subscribe', ['newHeads']);
      chain.advanceBlocks(3);
      const before = await client.notifications(id, 3);
      if (fault === 'drop') mocks.a!.ws.drop();
      else mocks.a!.ws.setFault({ kind: 'stall' });
      // Blocks the client would miss: a announces nothing now.
      chain.advanceBlocks(3);
      await until(() => mocks.b!.ws.stats().subscriptions === 1);
      chain.advanceBlocks(2);
      const after = await client.notifications(id, 5);
      const all = numbers([...before, ...after]);
      const first = all[0]!;
      expect(all).toEqual(Array.from({ length: 8 }, (_, i) => first + i));
      const hashes = [...before, ...after].map((note) => note.params.result.hash as string);
      expect(new Set(hashes).size).toBe(8);
      chain.advanceBlocks(1);
      expect(numbers(await client.notifications(id, 1))).toEqual([first + 8]);
      expect(client.messages).toEqual([]);
      const metrics = await ws.harness.metrics();
      expect(metrics).toContain(
        `cascade_ws_failovers_total{node="a",reason="${fault === 'drop' ? 'dropped' : 'stalled'}"} 1`,
      );
      expect(metrics).toContain('cascade_ws_gap_fills_total{kind="newHeads"} 1');
    },
  );

  it('delivers a signature confirmed during the gap, once', async () => {
    const { chain, mocks } = await twoNodes();
    chain.accept('solana', SIGNATURE);
    const client = await open();
    const { result: id } = await client.call('signatureSubscribe', [
      SIGNATURE,
      { commitment: 'confirmed' },
    ]);
    mocks.a!.ws.drop();
    chain.advanceSlots(1);
    const [note] = await client.notifications(id, 1);
    expect(note!.params.result.value).toEqual({ err: null });
    await until(() => ws.harness.cascade.ws.hub.counts().shared === 0);
    expect(client.messages).toEqual([]);
    expect(ws.harness.cascade.ws.hub.counters.gapFills.get('signature')).toBe(1);
  });

  it('back-fills logs missed during the gap, each (blockHash, logIndex) once', async () => {
    const { chain, mocks } = await twoNodes();
    const client = await open();
    const { result: id } = await client.call('eth_subscribe', ['logs', {}]);
    await until(() => ws.harness.cascade.ws.hub.counts().upstream === 1);
    chain.advanceBlocks(2);
    const before = await client.notifications(id, 2);
    mocks.a!.ws.drop();
    chain.advanceBlocks(2);
    await until(() => mocks.b!.ws.stats().subscriptions === 1);
    chain.advanceBlocks(1);
    const after = await client.notifications(id, 3);
    const blocks = [...before, ...after].map((note) =>
      Number.parseInt(note.params.result.blockNumber as string, 16),
    );
    expect(blocks).toEqual(Array.from({ length: 5 }, (_, i) => blocks[0]! + i));
  });

  it('moves slot streams off a penalized node without a gap, a repeat or a step back', async () => {
    const { chain, mocks } = await twoNodes();
    const client = await open();
    const { result: id } = await client.call('slotSubscribe');
    chain.advanceSlots(2);
    await client.notifications(id, 2);
    // A 503 on an HTTP request penalizes a; its subscriptions move to b.
    mocks.a!.setBehaviour({ fault: { kind: 'http', status: 503 }, failFirst: 1 });
    await client.call('getHealth');
    await until(
      () => mocks.b!.ws.stats().subscriptions === 1 && mocks.a!.ws.stats().subscriptions === 0,
    );
    chain.advanceSlots(3);
    const slots = (await client.notifications(id, 3)).map(
      (note) => note.params.result.slot as number,
    );
    expect(slots).toEqual([slots[0]!, slots[0]! + 1, slots[0]! + 2]);
    expect(await ws.harness.metrics()).toContain(
      'cascade_ws_failovers_total{node="a",reason="penalized"} 1',
    );
  });

  it('moves subscriptions off a node whose usage passes its threshold, the id unchanged', async () => {
    // 95 credits of 100 are the threshold; each notification from a costs 40.
    await ws.start([
      { name: 'a', monthlyLimit: 100, ws: { notification: 40 } },
      { name: 'b', tier: 1 },
    ]);
    const { chain, mocks } = ws.harness;
    const client = await open();
    const { result: id } = await client.call('slotSubscribe');
    chain.advanceSlots(3);
    const before = await client.notifications(id, 3);
    await until(
      () => mocks.b!.ws.stats().subscriptions === 1 && mocks.a!.ws.stats().subscriptions === 0,
    );
    chain.advanceSlots(2);
    const after = await client.notifications(id, 2);
    const slots = [...before, ...after].map((note) => note.params.result.slot as number);
    expect(slots).toEqual(Array.from({ length: 5 }, (_, i) => slots[0]! + i));
    expect(await ws.harness.metrics()).toContain(
      'cascade_ws_failovers_total{node="a",reason="over_quota"} 1',
    );
  });

  it('streams a new subscription on a node a reload removed and then added back', async () => {
    // A long idle close: the removed node's emptied socket is still open when it comes back.
    await ws.start([{ name: 'a' }, { name: 'b', tier: 1 }], { tuning: { idleCloseMs: 60_000 } });
    const { chain, mocks, cascade } = ws.harness;
    const server = cascade.server;
    const full = server.config;
    const first = await open();
    const { result: id } = await first.call('slotSubscribe');
    await until(() => mocks.a!.ws.stats().subscriptions === 1);
    server.reload({ ...full, nodes: full.nodes.filter((node) => node.name !== 'a') });
    await until(() => mocks.b!.ws.stats().subscriptions === 1);
    chain.advanceSlots(1);
    await first.notifications(id, 1);
    expect(await ws.harness.metrics()).toContain(
      'cascade_ws_failovers_total{node="a",reason="removed"} 1',
    );
    server.reload(full);
    first.close();
    await until(() => cascade.ws.hub.counts().shared === 0);
    const second = await open();
    const { result: id2 } = await second.call('slotSubscribe');
    await until(() => mocks.a!.ws.stats().subscriptions === 1);
    for (let i = 0; i < 4; i++) {
      chain.advanceSlots(1);
      await second.notifications(id2, 1);
    }
    const metrics = await ws.harness.metrics();
    expect(metrics).toContain('cascade_ws_upstream_subscriptions{node="a"} 1');
    // The retired node's emptied socket was closed, not left open beside the new one's.
    expect(metrics).toContain('cascade_ws_upstream_connections{node="a"} 1');
    expect(metrics).toContain('cascade_ws_failovers_total{node="a",reason="removed"} 1');
    expect(second.messages).toEqual([]);
  });

  it('closes clients with 1013 when no node can serve, never 1000', async () => {
    const { mocks } = await twoNodes();
    const client = await open();
    await client.call('slotSubscribe');
    for (const mock of Object.values(mocks)) mock.ws.setFault({ kind: 'refuse_connect' });
    mocks.a!.ws.drop();
    expect((await client.closed).code).toBe(1013);
    expect(await ws.harness.metrics()).toContain('cascade_ws_no_node_closes_total 1');
  });

  it('closes clients with 1012 when cascade shuts down', async () => {
    await twoNodes();
    const client = await open();
    await client.call('slotSubscribe');
    await ws.harness.cascade.close();
    expect((await client.closed).code).toBe(1012);
  });
});
