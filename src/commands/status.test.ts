import { describe, expect, it } from 'vitest';
import type { NodeView, NodesDocument } from '../core/index.js';
import { renderStatus } from './status.js';

function node(overrides: Partial<NodeView>): NodeView {
  return {
    name: 'a',
    tier: 0,
    rank: 1,
    state: 'up',
    cordoned: false,
    penalized_until: null,
    penalty_reason: null,
    latency_ms: 12.5,
    rps: 40,
    rps_limit: 50,
    in_flight: 2,
    max_concurrent: null,
    credits_used: 96_000,
    spillover_threshold: 95_000,
    monthly_limit: 100_000,
    next_reset: '2027-01-01',
    requests_last_minute: 2400,
    failures_last_minute: 3,
    ...overrides,
  };
}

const doc: NodesDocument = {
  source: 'server',
  pid: 42,
  generated_at: '2026-12-03T12:00:00.000Z',
  workers: 2,
  nodes: [
    node({}),
    node({
      name: 'b',
      state: 'penalized',
      penalized_until: '2026-12-03T12:00:07.000Z',
      penalty_reason: 'HTTP 429',
    }),
    node({ name: 'c', state: 'cordoned', cordoned: true, monthly_limit: null }),
  ],
  events: [{ at: '2026-12-03T11:59:58.000Z', node: 'b', kind: 'penalized', detail: 'HTTP 429' }],
};

describe('renderStatus', () => {
  it('writes limits, credits against threshold and limit, and the penalty with its reason', () => {
    const text = renderStatus(doc, false);
    expect(text).not.toContain('\x1b[');
    expect(text).toMatch(
      /│ a\s+│ 0\s+│ 1\s+│ up\s+│ 12\.5\s+│ 40 \(50\)\s+│ 2 \(∞\)\s+│ 96,000 \/ 95,000 \/ 100,000\s+│/,
    );
    expect(text).toContain('penalized (HTTP 429, 7 s left)');
    expect(text).toContain('96,000 (unmetered)');
    expect(text).toContain('pid 42 · 2 workers · as of 2026-12-03T12:00:00.000Z');
    expect(text).toContain('  2026-12-03T11:59:58.000Z  b penalized — HTTP 429');
  });

  it('colours the states for a terminal', () => {
    const text = renderStatus(doc, true);
    expect(text).toContain('\x1b[32mup\x1b[0m');
    expect(text).toContain('\x1b[33mpenalized (HTTP 429, 7 s left)\x1b[0m');
    expect(text).toContain('\x1b[35mcordoned\x1b[0m');
  });
});

describe('status head column', () => {
  it('shows head (lag), ? for a lag nobody can judge yet, — with no head', () => {
    const text = renderStatus(
      {
        ...doc,
        nodes: [
          node({ head: 320_000_000, lag: 0 }),
          node({ name: 'b', head: 319_999_800, lag: 200 }),
          node({ name: 'c', head: 5, lag: null }),
          node({ name: 'd' }),
        ],
      },
      false,
    );
    const rows = text.split('\n');
    expect(rows.find((line) => line.includes('│ a '))).toMatch(/│ 320,000,000 \(0\)\s+│$/);
    expect(rows.find((line) => line.includes('│ b '))).toMatch(/│ 319,999,800 \(200\)\s+│$/);
    expect(rows.find((line) => line.includes('│ c '))).toMatch(/│ 5 \(\?\)\s+│$/);
    expect(rows.find((line) => line.includes('│ d '))).toMatch(/│ —\s+│$/);
  });
});

describe('status with chains and accounts', () => {
  const chained: NodesDocument = {
    ...doc,
    workers: 1,
    nodes: [
      node({
        name: 'sol-prem',
        chain: 'sol',
        account: 'shared',
        monthly_limit: null,
        spillover_threshold: null,
      }),
      node({ name: 'sol-backup', chain: 'sol', tier: 1, rank: 2 }),
      node({ name: 'evm-prem', chain: 'evm', account: 'shared', state: 'penalized' }),
    ],
    chains: [
      { name: 'sol', paths: ['/sol'], hosts: [], status: 'ok', active_nodes: 2, total_nodes: 2 },
      {
        name: 'evm',
        paths: ['/evm', '/base'],
        hosts: ['base.example.com'],
        status: 'critical',
        active_nodes: 0,
        total_nodes: 1,
      },
    ],
    accounts: [
      {
        name: 'shared',
        nodes: ['sol-prem', 'evm-prem'],
        rps: 80,
        rps_limit: 100,
        in_flight: 4,
        max_concurrent: null,
        credits_used: 912_000,
        spillover_threshold: 900_000,
        monthly_limit: 1_000_000,
        reset_day: 15,
        next_reset: '2026-12-15',
        requests_last_minute: 4800,
        failures_last_minute: 6,
      },
      {
        name: 'free',
        nodes: [],
        rps: 0,
        rps_limit: null,
        in_flight: 0,
        max_concurrent: null,
        credits_used: 12,
        spillover_threshold: null,
        monthly_limit: null,
        reset_day: 1,
        next_reset: '2027-01-01',
        requests_last_minute: 0,
        failures_last_minute: 0,
      },
    ],
  };

  it('writes one table per chain under its heading, with an account column', () => {
    const text = renderStatus(chained, false);
    const lines = text.split('\n');
    const sol = lines.indexOf('chain sol — /sol · ok, 2 of 2 nodes active');
    const evm = lines.indexOf(
      'chain evm — /evm, /base, hosts base.example.com · critical, 0 of 1 nodes active',
    );
    expect(sol).toBeGreaterThanOrEqual(0);
    expect(evm).toBeGreaterThan(sol);
    const solTable = lines.slice(sol, evm).join('\n');
    expect(solTable).toMatch(/│ node\s+│ tier │ account │ rank │ state/);
    expect(solTable).toMatch(/│ sol-prem\s+│ 0\s+│ shared\s+│ 1\s+│ up/);
    expect(solTable).toMatch(/│ sol-backup\s+│ 1\s+│ —\s+│ 2\s+│ up/);
    // A node billed to an account spends its pool: never shown as unmetered.
    expect(solTable).toContain('96,000 (account shared)');
    expect(solTable).not.toContain('unmetered');
    expect(solTable).not.toContain('evm-prem');
    expect(lines.slice(evm).join('\n')).toMatch(/│ evm-prem\s+│ 0\s+│ shared\s+│ 1\s+│ penalized/);
  });

  it('writes the accounts after the chains: pool against threshold and limit, traffic, reset', () => {
    const text = renderStatus(chained, false);
    const accounts = text.slice(text.indexOf('provider accounts'));
    expect(accounts).toMatch(/│ account\s+│ nodes\s+│ req\/s \(limit\)\s+│ in flight \(max\)/);
    expect(accounts).toMatch(
      /│ shared\s+│ sol-prem, evm-prem\s+│ 80 \(100\)\s+│ 4 \(∞\)\s+│ 912,000 \/ 900,000 \/ 1,000,000 \(91\.2%\)\s+│ 2026-12-15\s+│ 4,800 \/ 6\s+│/,
    );
    expect(accounts).toMatch(/│ free\s+│ —\s+│ 0 \(∞\)\s+│ 0 \(∞\)\s+│ 12 \(unmetered\)/);
    expect(accounts).toContain('pid 42 · 1 serving process');
  });

  it('writes a plain document as before: one table, no account column, no chains', () => {
    const text = renderStatus(doc, false);
    expect(text).not.toContain('chain ');
    expect(text).not.toContain('account');
    expect(text.split('\n')[1]).toMatch(/│ node\s+│ tier │ rank │ state/);
  });
});

describe('status eth_getLogs limits', () => {
  it('lists configured and learned limits under the table, and nothing when none is known', () => {
    const text = renderStatus(
      {
        ...doc,
        nodes: [
          node({ logs_block_range: 10_000, logs_block_range_learned: 2000 }),
          node({ name: 'b', logs_block_range: 2000, logs_block_range_learned: null }),
          node({ name: 'c', logs_results_learned: 10_000 }),
          node({ name: 'd', logs_block_range: null }),
        ],
      },
      false,
    );
    expect(text).toContain(
      'eth_getLogs limits: a 2,000 blocks (learned, configured 10,000) · b 2,000 blocks · c 10,000 logs per answer (learned)',
    );
    expect(renderStatus(doc, false)).not.toContain('eth_getLogs limits');
  });
});
