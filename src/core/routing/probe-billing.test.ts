/**
 * The calls cascade makes on its own (a head probe, a chain identity check) are booked like
 * any call, and refunded when the provider never saw them — to the pool that was charged,
 * even if a reload billed the node to another provider account while the call was out.
 */
import { describe, expect, it } from 'vitest';
import { ChainState } from '../chain/chain-state.js';
import { ManualClock } from '../clock.js';
import type { AccountConfig } from '../config/types.js';
import { ProviderAccount } from '../node/provider-account.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { LocalUsageLedger } from '../quota/usage-ledger.js';
import { fakeNodes } from '../../../test/support/fake-upstream.js';
import { checkChainIdentity, expectedChainOf } from './chain-identity.js';
import { HeadProber } from './head-probe.js';

function accounts(clock: ManualClock): [ProviderAccount, ProviderAccount] {
  const ledger = new LocalUsageLedger();
  const make = (name: string): ProviderAccount => {
    const config: AccountConfig = {
      name,
      monthlyLimit: 100,
      resetDay: 1,
      rpsLimit: Infinity,
      maxConcurrent: Infinity,
      spilloverPercent: 100,
      spilloverThreshold: 100,
    };
    return new ProviderAccount(config, ledger.counter(`account:${name}`), clock);
  };
  return [make('a'), make('b')];
}

/** A node billed to `a` whose every call is refused before it is written (unsent). */
function refusingNode(clock: ManualClock, a: ProviderAccount): UpstreamNode {
  const { node } = fakeNodes(clock).make('n', {
    headProbeSeconds: 1,
    prices: { getSlot: 2, getGenesisHash: 2 },
    script: () => ({ after: 5, fail: 'connection refused', sent: false }),
  });
  node.bill(a);
  return node;
}

describe('calls cascade makes on its own, refused unsent', () => {
  it('a head probe refunds the pool it was booked on', () => {
    const clock = new ManualClock(1000);
    const [a, b] = accounts(clock);
    const node = refusingNode(clock, a);
    new HeadProber().tick([node], new ChainState(), undefined, clock.now());
    expect(a.usage.used).toBe(2);
    node.bill(b); // a reload, while the probe is out
    clock.advance(5);
    expect([a.usage.used, b.usage.used, node.ownUsage.used]).toEqual([0, 0, 0]);
  });

  it('a chain identity check refunds the pool it was booked on', async () => {
    const clock = new ManualClock(1000);
    const [a, b] = accounts(clock);
    const node = refusingNode(clock, a);
    const checked = checkChainIdentity(
      node,
      expectedChainOf('5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d'),
    );
    expect(a.usage.used).toBe(2);
    node.bill(b);
    clock.advance(5);
    expect((await checked).kind).toBe('unknown');
    expect([a.usage.used, b.usage.used, node.ownUsage.used]).toEqual([0, 0, 0]);
  });
});
