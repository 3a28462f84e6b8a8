/**
 * A cordon over WebSocket (admin API, as an operator applies it): live subscriptions of real
 * clients — @solana/web3.js `onSlotChange`, viem `watchBlockNumber` — move off the cordoned
 * node with the ids the clients hold (the gap filled when the new node is ahead), new
 * subscriptions avoid it, and an uncordon lets new ones back.
 */
import { Connection } from '@solana/web3.js';
import { createPublicClient, webSocket } from 'viem';
import { mainnet } from 'viem/chains';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MockChain } from '../../src/mock/index.js';
import { nodesOf } from '../support/admin-harness.js';
import { until } from '../support/ws-client.js';
import { useWsHarness, type WsHarness } from '../support/ws-harness.js';

const ws = useWsHarness();
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** a (tier 0) takes the subscriptions, b (tier 1) is the spare; the admin listener is on. */
function twoNodes(): Promise<WsHarness> {
  return ws.start([{ name: 'a' }, { name: 'b', tier: 1 }], { server: { adminPort: 0 } });
}

function adminUrl(harness: WsHarness): string {
  return `http://127.0.0.1:${harness.cascade.adminPort}`;
}

async function cordon(harness: WsHarness, name: string, on = true): Promise<void> {
  const verb = on ? 'cordon' : 'uncordon';
  const answer = await fetch(`${adminUrl(harness)}/admin/nodes/${name}/${verb}`, {
    method: 'POST',
  });
  expect(await answer.json()).toEqual({ node: name, cordoned: on });
}

function upstreamOn(harness: WsHarness, name: string): number {
  return harness.mocks[name]!.ws.stats().subscriptions;
}

/** viem `watchBlockNumber` on cascade's socket: the numbers it reports and its errors. */
function watchBlocks(harness: WsHarness): { blocks: number[]; errors: unknown[] } {
  const viem = createPublicClient({ chain: mainnet, transport: webSocket(harness.wsUrl) });
  cleanups.push(async () => (await viem.transport.getRpcClient()).close());
  const blocks: number[] = [];
  const errors: unknown[] = [];
  cleanups.push(
    viem.watchBlockNumber({
      onBlockNumber: (n) => blocks.push(Number(n)),
      onError: (e) => errors.push(e),
    }),
  );
  return { blocks, errors };
}

/** Consecutive integers from the first, each once. */
function contiguous(values: readonly number[]): number[] {
  return Array.from({ length: values.length }, (_, i) => values[0]! + i);
}

describe('cordon over WebSocket', () => {
  it('moves web3.js and viem subscriptions off the cordoned node, same ids, nothing missed', async () => {
    const harness = await twoNodes();
    const { chain } = harness;
    const connection = new Connection(harness.url, { wsEndpoint: harness.wsUrl });
    const slots: number[] = [];
    const listener = connection.onSlotChange((info) => slots.push(info.slot));
    cleanups.push(() => connection.removeSlotChangeListener(listener));
    const { blocks, errors } = watchBlocks(harness);
    // A raw client on the same slot stream shows the id a client holds across the move.
    const raw = await ws.open();
    const { result: rawId } = await raw.call('slotSubscribe');
    await until(() => upstreamOn(harness, 'a') === 2);
    chain.advanceSlots(2);
    chain.advanceBlocks(2);
    await until(() => slots.length >= 2 && blocks.length >= 2);
    await raw.notifications(rawId, 2);

    await cordon(harness, 'a');
    await until(() => upstreamOn(harness, 'b') === 2 && upstreamOn(harness, 'a') === 0);
    chain.advanceSlots(3);
    chain.advanceBlocks(3);
    await until(() => slots.length >= 5 && blocks.length >= 5);
    expect(slots).toEqual(contiguous(slots));
    expect(blocks).toEqual(contiguous(blocks));
    // Notifications match the id the client holds (and nothing else arrives, checked below).
    const after = (await raw.notifications(rawId, 3)).map(
      (note) => note.params.result.slot as number,
    );
    expect(after).toEqual(contiguous(after));
    expect(errors).toEqual([]);

    // A new subscription avoids the cordoned node.
    const { result: logsId } = await raw.call('eth_subscribe', ['logs', {}]);
    expect(typeof logsId).toBe('string');
    await until(() => upstreamOn(harness, 'b') === 3);
    expect(upstreamOn(harness, 'a')).toBe(0);

    const metrics = await harness.metrics();
    expect(metrics).toContain('cascade_ws_failovers_total{node="a",reason="cordoned"} 2');
    expect(metrics).toContain('cascade_ws_upstream_subscriptions{node="a"} 0');
    expect(metrics).toContain('cascade_ws_upstream_subscriptions{node="b"} 3');
    const admin = await nodesOf(adminUrl(harness));
    expect(admin.nodes.find((node) => node.name === 'a')).toMatchObject({ state: 'cordoned' });
    expect(raw.messages).toEqual([]);
  });

  it('fills the gap when the node moved to is ahead: viem sees every block once, in order', async () => {
    // b follows its own chain, AHEAD blocks past a's when the subscription moves.
    const ahead = new MockChain({ manual: true });
    const harness = await ws.start([{ name: 'a' }, { name: 'b', tier: 1, chain: ahead }], {
      server: { adminPort: 0 },
    });
    const { chain } = harness;
    const { blocks, errors } = watchBlocks(harness);
    const raw = await ws.open();
    const { result: rawId } = await raw.call('eth_subscribe', ['newHeads']);
    // viem and the raw client share one upstream subscription: wait for both to hold it.
    await until(() => harness.cascade.ws.hub.counts().clients === 2);
    expect(upstreamOn(harness, 'a')).toBe(1);
    chain.advanceBlocks(2);
    await until(() => blocks.length >= 2);
    const before = await raw.notifications(rawId, 2);

    const AHEAD = 5;
    ahead.advanceBlocks(chain.blockNumber() + AHEAD - ahead.blockNumber());
    await cordon(harness, 'a');
    await until(() => upstreamOn(harness, 'b') === 1 && upstreamOn(harness, 'a') === 0);
    // The fill brings the clients to b's head; b advances only after it (else the fill may
    // already carry blocks b would stream, and count them).
    await until(() => blocks.at(-1) === ahead.blockNumber());
    // a, cordoned, falls further behind: ignored.
    chain.advanceBlocks(1);
    ahead.advanceBlocks(2);
    await until(() => blocks.at(-1) === ahead.blockNumber());
    expect(blocks).toEqual(contiguous(blocks));
    expect(blocks).toHaveLength(2 + AHEAD + 2);
    const after = await raw.notifications(rawId, AHEAD + 2);
    const numbers = [...before, ...after].map((note) => Number(note.params.result.number));
    expect(numbers).toEqual(contiguous(numbers));
    expect(numbers.at(-1)).toBe(ahead.blockNumber());
    expect(errors).toEqual([]);
    const metrics = await harness.metrics();
    expect(metrics).toContain('cascade_ws_gap_fills_total{kind="newHeads"} 1');
    expect(metrics).toContain(`cascade_ws_gap_fill_notifications_total ${AHEAD}`);
    expect(raw.messages).toEqual([]);
  });

  it('after an uncordon, new subscriptions may use the node again; moved ones stay', async () => {
    const harness = await twoNodes();
    const client = await ws.open();
    const { result: slotId } = await client.call('slotSubscribe');
    await until(() => upstreamOn(harness, 'a') === 1);
    await cordon(harness, 'a');
    await until(() => upstreamOn(harness, 'b') === 1 && upstreamOn(harness, 'a') === 0);
    await cordon(harness, 'a', false);
    await client.call('eth_subscribe', ['newHeads']);
    await until(() => upstreamOn(harness, 'a') === 1);
    expect(upstreamOn(harness, 'b')).toBe(1);
    harness.chain.advanceSlots(1);
    await client.notifications(slotId, 1);
  });

  it('with every node cordoned, refuses new subscriptions and keeps live ones streaming where they are', async () => {
    const harness = await twoNodes();
    const client = await ws.open();
    const { result: slotId } = await client.call('slotSubscribe');
    await until(() => upstreamOn(harness, 'a') === 1);
    await cordon(harness, 'b');
    await cordon(harness, 'a');
    const refused = await client.call('eth_subscribe', ['newHeads']);
    expect(refused.error).toEqual({
      code: -32000,
      message: 'No node can take eth_subscribe now; retry later',
    });
    // Checks that found nowhere to go leave the subscription on a, streaming, uncounted.
    const hub = harness.cascade.ws.hub;
    const tick = vi.spyOn(hub, 'tick');
    await until(() => tick.mock.calls.length >= 3);
    harness.chain.advanceSlots(2);
    await client.notifications(slotId, 2);
    expect(upstreamOn(harness, 'a')).toBe(1);
    expect(await harness.metrics()).toContain(
      'cascade_ws_failovers_total{node="a",reason="cordoned"} 0',
    );
    // Uncordoning b gives it somewhere to go: it leaves a on the next check, counted once.
    await cordon(harness, 'b', false);
    await until(() => upstreamOn(harness, 'b') === 1 && upstreamOn(harness, 'a') === 0);
    expect(await harness.metrics()).toContain(
      'cascade_ws_failovers_total{node="a",reason="cordoned"} 1',
    );
    harness.chain.advanceSlots(1);
    await client.notifications(slotId, 1);
    expect(client.messages).toEqual([]);
  });
});
