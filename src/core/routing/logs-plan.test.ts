/** Planning an eth_getLogs split (issue 29): the cut, and the node it is planned for. */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { STANDARD_METHODS } from '../protocol/method-registry.js';
import { fakeNodes } from '../../../test/support/fake-upstream.js';
import { chunkCount, planLogs, splitRange } from './logs-plan.js';

const LOGS = STANDARD_METHODS.indexOf('eth_getLogs');
const clock = new ManualClock();
const nodes = fakeNodes(clock);
afterEach(() => nodes.close());

describe('splitRange', () => {
  it('covers the range exactly once, in order, in ⌈span / limit⌉ chunks of at most limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30_000_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 20_000 }),
        (from, span, limit) => {
          const to = from + span - 1;
          const ranges = splitRange(from, to, limit);
          expect(ranges).toHaveLength(chunkCount(span, limit));
          let next = from;
          for (const [a, b] of ranges) {
            expect(a).toBe(next);
            expect(b).toBeGreaterThanOrEqual(a);
            expect(b - a + 1).toBeLessThanOrEqual(limit);
            next = b + 1;
          }
          expect(next).toBe(to + 1);
          // Nearly equal: no chunk is more than one block bigger than another.
          const sizes = ranges.map(([a, b]) => b - a + 1);
          expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it('cuts 30,000 blocks at 10,000 into [from, mid] and [mid+1, to] pieces', () => {
    expect(splitRange(1, 30_000, 10_000)).toEqual([
      [1, 10_000],
      [10_001, 20_000],
      [20_001, 30_000],
    ]);
    expect(chunkCount(5, undefined)).toBe(1);
  });
});

describe('planLogs', () => {
  function node(name: string, limit: number | undefined, price: number, monthly?: number) {
    return nodes.make(name, {
      prices: { eth_getLogs: price },
      ...(limit === undefined ? {} : { maxLogsBlockRange: limit }),
      ...(monthly === undefined ? {} : { monthlyLimit: monthly, spilloverThreshold: monthly }),
    }).node;
  }

  it('cuts for the first node of the walk, priced whole', () => {
    const cheap = node('cheap', 2000, 10);
    const wide = node('wide', 10_000, 20);
    const outcome = planLogs([cheap, wide], LOGS, 30_000, clock.now());
    expect(outcome).toMatchObject({ kind: 'plan', plan: { node: cheap, chunks: 15, cost: 150 } });
  });

  it('passes over a node whose quota cannot hold the plan, and says so when none can', () => {
    const cheap = node('cheap', 2000, 10, 100);
    const wide = node('wide', 10_000, 20, 1000);
    expect(planLogs([cheap, wide], LOGS, 30_000, clock.now())).toMatchObject({
      kind: 'plan',
      plan: { node: wide, chunks: 3, cost: 60 },
    });
    const poor = node('poor', 10_000, 20, 50);
    expect(planLogs([cheap, poor], LOGS, 30_000, clock.now())).toMatchObject({
      kind: 'over_quota',
      plan: { node: cheap, chunks: 15, cost: 150 },
    });
  });

  it('learned limits count, the lower of learned and configured', () => {
    const a = node('a', 10_000, 1);
    a.logsLimits.learn({ blockRange: 500 });
    expect(planLogs([a], LOGS, 2000, clock.now())).toMatchObject({
      plan: { chunks: 4, limit: 500 },
    });
    a.logsLimits.learn({ blockRange: 5000 });
    expect(planLogs([a], LOGS, 2000, clock.now())).toMatchObject({ plan: { limit: 500 } });
  });

  it('skips a penalized or cordoned node while another can take it', () => {
    const sick = node('sick', 100, 1);
    sick.penalty.penalize(clock.now(), 5);
    const none = node('none', 1000, 1);
    none.cordoned = true;
    const well = node('well', 1000, 1);
    expect(planLogs([none, sick, well], LOGS, 2000, clock.now())).toMatchObject({
      plan: { node: well },
    });
    expect(planLogs([none, sick], LOGS, 2000, clock.now())).toMatchObject({ plan: { node: sick } });
    expect(planLogs([none], LOGS, 2000, clock.now())).toEqual({ kind: 'no_node' });
  });
});
