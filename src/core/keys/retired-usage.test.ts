import { describe, expect, it } from 'vitest';
import { RetiredUsage } from './retired-usage.js';

describe('RetiredUsage', () => {
  it('keeps a removed key’s usage until its period ends, and hands it back once', () => {
    let wall = Date.parse('2026-03-10T12:00:00Z');
    const retired = new RetiredUsage(() => wall);
    retired.keep('web', { used: 4, periodStart: '2026-03-01' }, 1);
    retired.keep('old', { used: 7, periodStart: '2025-11-01' });
    expect(retired.entries()).toEqual([
      ['web', { used: 4, periodStart: '2026-03-01' }],
      ['old', { used: 7, periodStart: '2025-11-01' }],
    ]);
    // Its reset day passed: the budget starts over, nothing is worth keeping. A reset day
    // unknown (read from quotas.json at a start) keeps the entry; restore ignores a past period.
    wall = Date.parse('2026-04-01T00:00:01Z');
    expect(retired.entries()).toEqual([['old', { used: 7, periodStart: '2025-11-01' }]]);
    expect(retired.take('old')).toMatchObject({ used: 7 });
    expect(retired.take('old')).toBeUndefined();
  });
});
