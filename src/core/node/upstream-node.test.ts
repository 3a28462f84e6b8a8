import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { NOOP_METRICS } from '../metrics.js';
import { nodeConfig } from '../../../test/support/node-config.js';
import { DeadlineQueue } from './deadline-queue.js';
import { UpstreamNode } from './upstream-node.js';

const clock = new ManualClock();
const made: UpstreamNode[] = [];
function node(rpsLimit: number): UpstreamNode {
  const deps = { clock, deadlines: new DeadlineQueue(clock) };
  const created = new UpstreamNode(
    nodeConfig({ name: 'n', rpsLimit }),
    { used: 0, add() {} },
    NOOP_METRICS.forNode('n'),
    deps,
  );
  made.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(made.splice(0).map((n) => n.transport.close()));
});

describe('UpstreamNode rate share', () => {
  it('spends only its share of the configured rate', () => {
    const n = node(10);
    n.setShare(2, Infinity, clock.now());
    expect(n.takeToken(clock.now())).toBe(0);
    expect(n.takeToken(clock.now())).toBe(0);
    expect(n.takeToken(clock.now())).toBe(500);
  });

  it('with a share of 0 asks to look again soon instead of never (the next split may grant one)', () => {
    const n = node(10);
    n.setShare(0, Infinity, clock.now());
    const wait = n.takeToken(clock.now());
    expect(Number.isFinite(wait)).toBe(true);
    expect(wait).toBeGreaterThan(0);
    n.setShare(5, Infinity, clock.now());
    clock.advance(200);
    expect(n.takeToken(clock.now())).toBe(0);
  });
});
