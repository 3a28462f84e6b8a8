/** Gap fill reads the head from the one chain tracker as well as asking the network. */
import { describe, expect, it } from 'vitest';
import { Bound, ChainState, Family, Level, headSlot } from '../chain/chain-state.js';
import { HEAD_FRESH_MS, fillGap, type RouterCall } from './gap-fill.js';
import type { SharedSubscription } from './shared-subscription.js';

const LATEST = headSlot(Family.evm, Level.latest);

function newHeadsSub(last: number): { sub: SharedSubscription; sent: unknown[] } {
  const sent: unknown[] = [];
  const sub = {
    spec: { kind: 'newHeads' },
    filter: { last },
    params: [],
    deliver: (_bytes: Buffer, value: unknown) => sent.push(value),
  } as unknown as SharedSubscription;
  return { sub, sent };
}

function recorder(): { call: RouterCall; calls: string[] } {
  const calls: string[] = [];
  const call: RouterCall = (method, params) => {
    calls.push(method);
    if (method === 'eth_blockNumber') return Promise.resolve('0x14');
    const n = Number.parseInt((JSON.parse(params) as string[])[0]!, 16);
    return Promise.resolve({ number: `0x${n.toString(16)}` });
  };
  return { call, calls };
}

describe('fillGap and the chain tracker', () => {
  it('fills newHeads up to the tracker head when the routed head call answers lower', async () => {
    const chain = new ChainState();
    chain.observe(chain.nodeHeads('a'), LATEST, 22, Bound.exact, 1000);
    const { sub, sent } = newHeadsSub(18);
    const { call, calls } = recorder(); // eth_blockNumber answers 0x14 = 20 (a lagging node)
    const known = () => chain.recentHead(LATEST, 1500, HEAD_FRESH_MS);
    expect(await fillGap(sub, call, known)).toBe(4);
    expect(calls[0]).toBe('eth_blockNumber');
    expect(sent.at(-1)).toEqual({ number: '0x16' });
  });

  it('goes by the routed head when the tracker head is old or lower', async () => {
    const chain = new ChainState();
    chain.observe(chain.nodeHeads('a'), LATEST, 30, Bound.exact, 0);
    const { sub } = newHeadsSub(18);
    const { call } = recorder();
    const known = () => chain.recentHead(LATEST, HEAD_FRESH_MS + 1, HEAD_FRESH_MS);
    expect(await fillGap(sub, call, known)).toBe(2);
    const { sub: ahead } = newHeadsSub(10);
    const fresh = () => chain.recentHead(LATEST, 0, HEAD_FRESH_MS);
    chain.observe(chain.nodeHeads('a'), LATEST, 15, Bound.exact, 0);
    expect(await fillGap(ahead, call, fresh)).toBe(10);
  });
});
