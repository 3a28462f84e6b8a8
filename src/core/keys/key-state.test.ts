import { describe, expect, it } from 'vitest';
import { clientKey } from '../../../test/support/client-keys.js';
import { KeyState } from './key-state.js';

const KEY = 'ck_unit_0123456789abcdefghijklmnop';

describe('KeyState', () => {
  it('spends no rate token on a call its budget refuses', () => {
    const state = new KeyState(clientKey('k', KEY, { rpsLimit: 2, monthlyCredits: 1 }), 0, () => 0);
    expect(state.admit('getSlot', 'ip', undefined, 0, 1)).toBeUndefined();
    state.settle(1, 1);
    expect(state.admit('getSlot', 'ip', undefined, 0, 1)?.reason).toBe('budget');
    // The operator raises the budget: the second token of this second is still there.
    state.budgetOverride = 10;
    expect(state.admit('getSlot', 'ip', undefined, 0, 1)).toBeUndefined();
    expect(state.admit('getSlot', 'ip', undefined, 0, 1)?.reason).toBe('rate_limit');
  });

  it('holds max_concurrent slots until the calls settle', () => {
    const state = new KeyState(clientKey('k', KEY, { maxConcurrent: 2 }), 0, () => 0);
    expect(state.admit('getSlot', 'ip', undefined, 0, 0)).toBeUndefined();
    expect(state.admit('getSlot', 'ip', undefined, 0, 0)).toBeUndefined();
    expect(state.admit('getSlot', 'ip', undefined, 0, 0)?.reason).toBe('concurrency');
    state.settle(0, 3);
    expect(state.admit('getSlot', 'ip', undefined, 0, 0)).toBeUndefined();
    expect(state.used).toBe(3);
  });

  it('reserves the cheapest price, refuses what would pass the budget, settles to the cost', () => {
    const wall = Date.parse('2026-12-04T12:00:00Z');
    const state = new KeyState(
      clientKey('k', KEY, { monthlyCredits: 10, resetDay: 15 }),
      0,
      () => wall,
    );
    expect(state.admit('m', 'ip', undefined, 0, 4)).toBeUndefined();
    expect(state.admit('m', 'ip', undefined, 0, 4)).toBeUndefined();
    // 8 reserved: a third call at 4 would pass 10.
    const refused = state.admit('m', 'ip', undefined, 0, 4)!;
    expect(refused.message).toContain('it resets on 2026-12-15');
    expect(refused.retryAfterSeconds).toBe(10 * 86400 + 12 * 3600);
    state.settle(4, 0); // a cache hit: free
    state.settle(4, 6); // served by a dearer node
    expect(state.usage()).toEqual({ used: 6, periodStart: '2026-11-15' });
    expect(state.reservedNow).toBe(0);
  });

  it('starts the budget over when the billing period rolls, keeping calls in flight reserved', () => {
    let wall = Date.parse('2026-12-14T23:00:00Z');
    const state = new KeyState(
      clientKey('k', KEY, { monthlyCredits: 5, resetDay: 15 }),
      0,
      () => wall,
    );
    state.restore({ used: 5, periodStart: '2026-11-15' });
    expect(state.admit('m', 'ip', undefined, 0, 1)?.reason).toBe('budget');
    wall = Date.parse('2026-12-15T00:00:01Z');
    expect(state.admit('m', 'ip', undefined, 0, 1)).toBeUndefined();
    expect(state.usage()).toEqual({ used: 1, periodStart: '2026-12-15' });
    state.settle(1, 1);
    expect(state.used).toBe(1);
  });

  it('keeps its usage when a moved reset_day makes the current period start earlier', () => {
    const wall = Date.parse('2026-12-07T12:00:00Z');
    const before = clientKey('k', KEY, { monthlyCredits: 10, resetDay: 5 });
    const state = new KeyState(before, 0, () => wall);
    state.settle(0, 3);
    expect(state.usage()).toEqual({ used: 3, periodStart: '2026-12-05' });
    // reset_day 5 -> 15 on the 7th: the period by the new day began on 2026-11-15, before the
    // one in force; as for nodes, nothing resets until the next reset day comes.
    state.reconfigure(clientKey('k', KEY, { monthlyCredits: 10, resetDay: 15 }), 0);
    expect(state.usage()).toEqual({ used: 3, periodStart: '2026-12-05' });
    expect(state.nextResetDay()).toBe('2026-12-15');
    // A restart with the new day reads the saved period the same way.
    const restarted = new KeyState(
      clientKey('k', KEY, { monthlyCredits: 10, resetDay: 15 }),
      0,
      () => wall,
    );
    restarted.restore({ used: 3, periodStart: '2026-12-05' });
    expect(restarted.usage()).toEqual({ used: 3, periodStart: '2026-12-05' });
    // An older saved period (one that has ended) is not restored.
    const later = new KeyState(before, 0, () => wall);
    later.restore({ used: 3, periodStart: '2026-11-05' });
    expect(later.usage()).toEqual({ used: 0, periodStart: '2026-12-05' });
  });

  it('says whether the budget is spent, too short for the call, or smaller than the call', () => {
    const wall = Date.parse('2026-12-07T00:00:00Z');
    const state = new KeyState(
      clientKey('k', KEY, { monthlyCredits: 3, resetDay: 15 }),
      0,
      () => wall,
    );
    const dear = state.admit('getProgramAccounts', 'ip', undefined, 0, 4)!;
    expect(dear.message).toBe(
      "Key 'k' cannot afford getProgramAccounts: it costs at least 4 credits, more than the key's whole budget of 3 (keys.monthly_credits)",
    );
    expect(dear.retryAfterSeconds).toBeUndefined();
    state.settle(0, 2);
    const short = state.admit('getBalance', 'ip', undefined, 0, 2)!;
    expect(short.message).toBe(
      "Key 'k' has spent its budget of 3 credits but 1 (keys.monthly_credits), less than the 2 getBalance costs at least; it resets on 2026-12-15",
    );
    expect(short.retryAfterSeconds).toBe(8 * 86400);
    state.settle(0, 1);
    state.budgetOverride = 3;
    expect(state.admit('getSlot', 'ip', undefined, 0, 1)!.message).toBe(
      "Key 'k' has spent its budget of 3 credits (set with `cascade key budget`); it resets on 2026-12-15",
    );
  });

  it('applies methods, origins and per-IP rates in that order', () => {
    const config = clientKey('k', KEY, {
      allow: ['get*'],
      deny: ['getProgramAccounts'],
      origins: ['https://app.example'],
      perIpRps: 1,
    });
    const state = new KeyState(config, 0, () => 0);
    expect(state.admit('getSlot', 'a', 'https://evil.example', 0, 0)?.reason).toBe('origin');
    expect(state.admit('getProgramAccounts', 'a', undefined, 0, 0)?.reason).toBe('method');
    expect(state.admit('sendTransaction', 'a', undefined, 0, 0)?.reason).toBe('method');
    expect(state.admit('getSlot', 'a', 'https://app.example', 0, 0)).toBeUndefined();
    expect(state.admit('getSlot', 'a', undefined, 0, 0)?.reason).toBe('per_ip_rate_limit');
    expect(state.admit('getSlot', 'b', undefined, 0, 0)).toBeUndefined();
  });
});
