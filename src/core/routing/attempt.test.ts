import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { AccountConfig } from '../config/types.js';
import { ProviderAccount } from '../node/provider-account.js';
import { LocalUsageLedger } from '../quota/usage-ledger.js';
import { fakeNodeDeps, fakeNode } from '../../../test/support/fake-upstream.js';
import { nodeConfig } from '../../../test/support/node-config.js';
import { Attempt, settleAttempt, type AttemptSubject } from './attempt.js';
import { SUCCESS } from './classify.js';

function account(name: string, ledger: LocalUsageLedger, clock: ManualClock): ProviderAccount {
  const config: AccountConfig = {
    name,
    monthlyLimit: 100,
    resetDay: 1,
    rpsLimit: Infinity,
    maxConcurrent: 2,
    spilloverPercent: 100,
    spilloverThreshold: 100,
  };
  return new ProviderAccount(config, ledger.counter(`account:${name}`), clock);
}

describe('an attempt the provider never saw', () => {
  it('refunds the pool it was booked on, even if a reload billed its node to another account meanwhile', async () => {
    const clock = new ManualClock(1000);
    const ledger = new LocalUsageLedger();
    const [a, b] = [account('a', ledger, clock), account('b', ledger, clock)];
    // Refused before a byte was written: the provider bills nothing.
    const { node } = fakeNode(nodeConfig({ name: 'n' }), fakeNodeDeps(clock), () => ({
      after: 5,
      fail: 'connection refused',
      sent: false,
    }));
    node.bill(a);
    expect(a.permits.tryAcquire() && node.permits.tryAcquire()).toBe(true);
    const attempt = new Attempt(node);
    node.usage.add(3); // admission books the price on the node as billed now
    attempt.credits = 3;
    const subject: AttemptSubject = {
      ctx: {
        clock,
        attemptTimeoutMs: 500,
        events: { penalized: () => undefined, recovered: () => undefined },
      },
      deadline: clock.now() + 1000,
      classify: () => SUCCESS,
    };
    attempt.subject = subject;
    const settled = settleAttempt(attempt, Buffer.from('{}'), {}, false, clock.now());
    expect([a.usage.used, node.usage.used]).toEqual([3, 3]);
    node.bill(b); // the reload, while the attempt is on its way
    clock.advance(5);
    await settled;
    expect([a.usage.used, b.usage.used, node.ownUsage.used]).toEqual([0, 0, 0]);
    // The permit it held is given back to the account it was taken from.
    expect([a.permits.inFlight, b.permits.inFlight, node.permits.inFlight]).toEqual([0, 0, 0]);
  });
});
