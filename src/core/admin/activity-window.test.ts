import { describe, expect, it } from 'vitest';
import { ActivityWindow } from './activity-window.js';

describe('ActivityWindow', () => {
  it('knows nothing before the first sample', () => {
    const window = new ActivityWindow();
    expect(window.activity('a', { attempts: 5, failures: 1 })).toEqual({
      rps: 0,
      requestsLastMinute: 0,
      failuresLastMinute: 0,
    });
  });

  it('gives the last second as the difference of the last two samples', () => {
    const window = new ActivityWindow();
    window.sample('a', { attempts: 10, failures: 0 });
    window.sample('a', { attempts: 25, failures: 2 });
    expect(window.activity('a', { attempts: 27, failures: 2 })).toEqual({
      rps: 15,
      requestsLastMinute: 17,
      failuresLastMinute: 2,
    });
  });

  it('counts the last minute only, once more than a minute was sampled', () => {
    const window = new ActivityWindow();
    for (let second = 0; second <= 90; second++) {
      window.sample('a', { attempts: second * 10, failures: second });
    }
    // Sample 90 is newest; the window starts at sample 31 (59 seconds back): 60 s of traffic.
    expect(window.activity('a', { attempts: 900, failures: 90 })).toEqual({
      rps: 10,
      requestsLastMinute: 590,
      failuresLastMinute: 59,
    });
  });

  it('starts over for a node whose totals went down (replaced under its name)', () => {
    const window = new ActivityWindow();
    window.sample('a', { attempts: 100, failures: 10 });
    window.sample('a', { attempts: 3, failures: 0 });
    window.sample('a', { attempts: 5, failures: 0 });
    expect(window.activity('a', { attempts: 5, failures: 0 })).toMatchObject({
      rps: 2,
      requestsLastMinute: 2,
    });
  });

  it('forgets nodes a reload removed', () => {
    const window = new ActivityWindow();
    window.sample('a', { attempts: 1, failures: 0 });
    window.sample('b', { attempts: 1, failures: 0 });
    window.retain(new Set(['b']));
    window.sample('a', { attempts: 9, failures: 0 });
    expect(window.activity('a', { attempts: 9, failures: 0 }).requestsLastMinute).toBe(0);
  });
});
