/** /health with --workers: the workers' chain views merged into each node's head and lag. */
import { describe, expect, it } from 'vitest';
import { nodeConfig } from '../../../test/support/node-config.js';
import { withChainsAndAccounts } from './chain-health.js';
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

describe('fleet /health with chains and accounts', () => {
  const configs = [
    nodeConfig({ name: 'a', chain: 'sol', account: 'plan' }),
    nodeConfig({ name: 'b', chain: 'sol' }),
    nodeConfig({ name: 'c', chain: 'evm', account: 'plan' }),
  ];
  const chains = [
    { name: 'sol', paths: ['/sol'], hosts: [] },
    { name: 'evm', paths: ['/evm'], hosts: ['evm.example.com'] },
  ];
  const accounts = [
    {
      name: 'plan',
      monthlyLimit: 1000,
      resetDay: 3,
      rpsLimit: Infinity,
      maxConcurrent: 4,
      spilloverPercent: 90,
      spilloverThreshold: 900,
    },
  ];

  it('labels the merged nodes and judges each chain by its own', () => {
    const workers = [{ a: [0, 2000], b: [0, 3000], c: [5, 1000] }, { c: [0, 1000] }] as Array<
      Record<string, WorkerNodeHealth>
    >;
    const report = withChainsAndAccounts(
      fleetHealthReport(configs, workers),
      { nodes: configs, chains, accounts },
      (name) => (name === 'plan' ? 321 : 0),
      new Date('2026-12-05T12:00:00Z'),
    );
    expect(report.status).toBe('degraded');
    expect(report.nodes.map((node) => [node.name, node.chain, node.account, node.status])).toEqual([
      ['a', 'sol', 'plan', 'up'],
      ['b', 'sol', undefined, 'up'],
      ['c', 'evm', 'plan', 'down'],
    ]);
    expect(report.chains).toEqual([
      { name: 'sol', paths: ['/sol'], hosts: [], status: 'ok', active_nodes: 2, total_nodes: 2 },
      {
        name: 'evm',
        paths: ['/evm'],
        hosts: ['evm.example.com'],
        status: 'critical',
        active_nodes: 0,
        total_nodes: 1,
      },
    ]);
    expect(report.accounts).toEqual([
      {
        name: 'plan',
        used: 321,
        quota: 1000,
        threshold: 900,
        rps_limit: null,
        max_concurrent: 4,
        reset_day: 3,
        next_reset: '2027-01-03',
        nodes: ['a', 'c'],
      },
    ]);
  });

  it('returns the plain report itself for a config without chains or accounts', () => {
    const plain = fleetHealthReport(nodes, [{ a: [0, 2000] }]);
    const configsPlain = nodes.map((node) => nodeConfig(node));
    expect(withChainsAndAccounts(plain, { nodes: configsPlain }, () => 0, new Date())).toBe(plain);
  });
});
