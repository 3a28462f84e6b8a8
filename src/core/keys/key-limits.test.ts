import { describe, expect, it } from 'vitest';
import { clientKey } from '../../../test/support/client-keys.js';
import { KeyLimits } from './key-limits.js';

const KEY = 'ck_limits_0123456789abcdefghijklmn';

/** Calls from `ip` at `now` until the first refusal; how many passed (up to 100). */
function passes(limits: KeyLimits, ip: string, now: number): number {
  let passed = 0;
  while (passed < 100 && limits.check(ip, now) === undefined) passed++;
  return passed;
}

describe('KeyLimits', () => {
  it('spends no rate on a call refused for concurrency (a batch wider than max_concurrent)', () => {
    const limits = new KeyLimits(
      clientKey('k', KEY, { rpsLimit: 3, perIpRps: 3, maxConcurrent: 1 }),
      0,
    );
    expect(limits.check('a', 0)).toBeUndefined();
    limits.acquire();
    // Four more elements of the same batch: refused for concurrency, never for rate.
    for (let i = 0; i < 4; i++) expect(limits.check('a', 0)?.reason).toBe('concurrency');
    limits.release(1);
    // The two tokens left are still there, for the key and for the address.
    for (let i = 0; i < 2; i++) {
      expect(limits.check('a', 0)).toBeUndefined();
      limits.acquire();
      limits.release(1);
    }
    expect(limits.check('a', 0)?.reason).toBe('per_ip_rate_limit');
  });

  it("gives back the address's token when the key's own rate refuses the call", () => {
    const limits = new KeyLimits(clientKey('k', KEY, { rpsLimit: 1, perIpRps: 2 }), 0);
    expect(limits.check('a', 0)).toBeUndefined();
    // The key is out of tokens; the address keeps its second one however often it asks.
    for (let i = 0; i < 3; i++) expect(limits.check('a', 0)?.reason).toBe('rate_limit');
  });

  it('enforces only its share of rps_limit, within the configured limit', () => {
    const limits = new KeyLimits(clientKey('k', KEY, { rpsLimit: 10 }), 0);
    limits.setShare({ rps: 4, concurrent: Infinity, perIp: Infinity }, 0);
    expect(passes(limits, 'a', 0)).toBe(4);
    // A share above the limit is the limit.
    limits.setShare({ rps: 50, concurrent: Infinity, perIp: Infinity }, 0);
    expect(passes(limits, 'a', 1000)).toBe(10);
  });

  it('a share of 0 refuses with a Retry-After of a second (the next split may grant some)', () => {
    const limits = new KeyLimits(clientKey('k', KEY, { rpsLimit: 10, maxConcurrent: 3 }), 0);
    limits.setShare({ rps: 0, concurrent: 1, perIp: Infinity }, 0);
    const refused = limits.check('a', 0)!;
    expect([refused.reason, refused.retryAfterSeconds]).toEqual(['rate_limit', 1]);
    // Its message names the key's own limit, not the share.
    expect(refused.message).toContain('rate limit of 10 requests per second');
    limits.setShare({ rps: 10, concurrent: 1, perIp: Infinity }, 0);
    expect(limits.check('a', 1000)).toBeUndefined();
    limits.acquire();
    expect(limits.check('a', 1000)?.reason).toBe('concurrency');
  });

  it("moves every address's per-IP bucket to a new share, keeping the tokens it has", () => {
    const limits = new KeyLimits(clientKey('k', KEY, { perIpRps: 6 }), 0);
    expect(passes(limits, 'a', 0)).toBe(6);
    limits.setShare({ rps: Infinity, concurrent: Infinity, perIp: 2 }, 0);
    // One second later: refilled at the share's rate, up to it — not the configured 6.
    expect(passes(limits, 'a', 1000)).toBe(2);
    expect(passes(limits, 'b', 1000)).toBe(2);
  });

  it('reports the calls it saw and the most in flight as its demand', () => {
    const limits = new KeyLimits(clientKey('k', KEY, { maxConcurrent: 2 }), 0);
    for (let i = 0; i < 3; i++) if (limits.check('a', 0) === undefined) limits.acquire();
    // Two in flight, one refused for want of a slot: it wanted three at once.
    expect(limits.takeDemand()).toEqual({ rps: 3, concurrent: 3 });
    limits.release(1);
    expect(limits.takeDemand()).toEqual({ rps: 0, concurrent: 2 });
    expect(limits.takeDemand()).toEqual({ rps: 0, concurrent: 1 });
  });
});
