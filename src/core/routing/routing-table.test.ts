import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { NOOP_METRICS } from '../metrics.js';
import { DeadlineQueue } from '../node/deadline-queue.js';
import { UpstreamNode } from '../node/upstream-node.js';
import { nodeConfig } from '../../../test/support/node-config.js';
import { rankByLatency, rankNodes } from './routing-table.js';

const nodes: UpstreamNode[] = [];
const clock = new ManualClock();
const deps = { clock, deadlines: new DeadlineQueue(clock) };
function node(name: string, tier: number, emaMs?: number): UpstreamNode {
  const created = new UpstreamNode(
    nodeConfig({ name, tier }),
    { used: 0, add() {} },
    NOOP_METRICS.forNode(name),
    deps,
  );
  if (emaMs !== undefined) created.ema.observe(emaMs);
  nodes.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.transport.close()));
});

describe('rankNodes', () => {
  it('orders by tier first, then by measured latency', () => {
    const ranked = rankNodes([node('slow0', 0, 20), node('fast1', 1, 1), node('fast0', 0, 2)]);
    expect(ranked.map((n) => n.name)).toEqual(['fast0', 'slow0', 'fast1']);
  });

  it('puts unmeasured nodes last in their tier, keeping config order among them', () => {
    const ranked = rankNodes([node('a', 0), node('b', 0, 50), node('c', 0), node('d', 1, 1)]);
    expect(ranked.map((n) => n.name)).toEqual(['b', 'a', 'c', 'd']);
  });

  it('keeps config order for equal latencies (stable)', () => {
    const ranked = rankNodes([node('x', 2, 5), node('y', 2, 5), node('z', 2, 5)]);
    expect(ranked.map((n) => n.name)).toEqual(['x', 'y', 'z']);
  });

  it('keeps penalized nodes in the list', () => {
    const penalized = node('p', 0, 1);
    penalized.penalty.penalize(0, 0);
    expect(rankNodes([penalized, node('q', 0, 2)]).map((n) => n.name)).toEqual(['p', 'q']);
  });
});

describe('rankByLatency', () => {
  it('puts measured nodes first by latency whatever the tier, unmeasured after in cost order', () => {
    const ranked = rankNodes([
      node('slow0', 0, 20),
      node('new0', 0),
      node('fast2', 2, 1),
      node('mid1', 1, 5),
      node('new1', 1),
    ]);
    expect(rankByLatency(ranked).map((n) => n.name)).toEqual([
      'fast2',
      'mid1',
      'slow0',
      'new0',
      'new1',
    ]);
  });

  it('equals the cost order while nothing is measured', () => {
    const ranked = rankNodes([node('b', 1), node('a', 0), node('c', 2)]);
    expect(rankByLatency(ranked)).toEqual(ranked);
  });
});
