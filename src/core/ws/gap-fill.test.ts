/** Gap fill's head: the routed eth_blockNumber, else the one chain tracker's fresh head. */
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

function recorder(headFails = false): { call: RouterCall; calls: string[] } {
  const calls: string[] = [];
  const call: RouterCall = (method, params) => {
    calls.push(method);
    if (method === 'eth_blockNumber')
      return headFails ? Promise.reject(new Error('no node')) : Promise.resolve('0x14');
    const n = Number.parseInt((JSON.parse(params) as string[])[0]!, 16);
    return Promise.resolve({ number: `0x${n.toString(16)}` });
  };
  return { call, calls };
}

describe('fillGap and the chain tracker', () => {
  it('falls back to the tracker head when the routed head call fails', async () => {
    const chain = new ChainState();
    chain.observe(chain.nodeHeads('a'), LATEST, 22, Bound.exact, 1000);
    const { sub, sent } = newHeadsSub(18);
    const { call, calls } = recorder(true);
    const known = () => chain.recentHead(LATEST, 1500, HEAD_FRESH_MS);
    expect(await fillGap(sub, call, known)).toBe(4);
    expect(calls[0]).toBe('eth_blockNumber');
    expect(sent.at(-1)).toEqual({ number: '0x16' });
  });

  it('goes by the routed head when it answers; an old tracker head is not used', async () => {
    const chain = new ChainState();
    chain.observe(chain.nodeHeads('a'), LATEST, 30, Bound.exact, 0);
    const { sub } = newHeadsSub(18);
    expect(
      await fillGap(sub, recorder().call, () => chain.recentHead(LATEST, 0, HEAD_FRESH_MS)),
    ).toBe(2);
    const { sub: failing } = newHeadsSub(18);
    const old = () => chain.recentHead(LATEST, HEAD_FRESH_MS + 1, HEAD_FRESH_MS);
    await expect(fillGap(failing, recorder(true).call, old)).rejects.toThrow('no node');
  });
});
