/** /health with --workers: the workers' chain views merged into each node's head and lag. */
import { describe, expect, it } from 'vitest';
import { fleetHealthReport, type WorkerNodeHealth } from './health.js';

const nodes = [
  { name: 'a', tier: 0 },
  { name: 'b', tier: 0 },
  { name: 'c', tier: 0 },
];

describe('fleetHealthReport and chain state', () => {
  it('shows the highest head any worker saw and the smallest lag any worker knows', () => {
    const one: Record<string, WorkerNodeHealth> = {
      a: [0, 2000, { head: { finalized: 900 }, lag: 100, wrongChain: false }],
      b: [0, 3000, { head: { finalized: 1000 }, lag: 0, wrongChain: false }],
      c: [0, 1000],
    };
    const two: Record<string, WorkerNodeHealth> = {
      a: [0, 2000, { head: { finalized: 950, processed: 960 }, lag: 50, wrongChain: false }],
      b: [0, 3000],
      c: [0, 1000, { head: {}, lag: -1, wrongChain: true }],
    };
    const report = fleetHealthReport(nodes, [one, two]);
    expect(report.nodes[0]).toMatchObject({
      name: 'a',
      status: 'up',
      head: { finalized: 950, processed: 960 },
      lag: 50,
    });
    expect(report.nodes[1]).toMatchObject({ name: 'b', head: { finalized: 1000 }, lag: 0 });
    expect(report.nodes[2]).toMatchObject({ name: 'c', status: 'down', wrong_chain: true });
  });

  it('keeps the plain shape when no worker read a head', () => {
    const report = fleetHealthReport(nodes.slice(0, 1), [{ a: [0, 2000] }]);
    expect(report.nodes[0]).toEqual({ name: 'a', tier: 0, status: 'up', latency_ms: 2 });
  });
});
