import { describe, expect, it } from 'vitest';
import { parseExposition, perNode, samplesOf, valueOf } from './prometheus-text.js';

const TEXT = `# HELP rpc_upstream_attempts_total Attempts sent to upstream RPC nodes
# TYPE rpc_upstream_attempts_total counter
rpc_upstream_attempts_total{node="Helius-1",outcome="success"} 120
rpc_upstream_attempts_total{node="Helius-1",outcome="transport_error"} 3
rpc_upstream_attempts_total{node="Alchemy \\"A\\"",outcome="success"} 7
# TYPE rpc_upstream_attempts_total_extra counter
rpc_upstream_attempts_total_extra{node="Helius-1",outcome="success"} 999
# TYPE rpc_upstream_skips_total counter
rpc_upstream_skips_total{node="Helius-1",reason="rate_limit"} 4.5e3
# TYPE rpc_healthy_nodes gauge
rpc_healthy_nodes 2
# TYPE rpc_node_healthy gauge
rpc_node_healthy{node="Helius-1",tier="0"} 1
`;
const exposition = parseExposition(TEXT);

describe('samplesOf', () => {
  it('reads labels (escaped quotes included) and values of one metric only', () => {
    const samples = samplesOf(exposition, 'rpc_upstream_attempts_total');
    expect(samples).toHaveLength(3);
    expect(samples[2]).toEqual({
      name: 'rpc_upstream_attempts_total',
      labels: { node: 'Alchemy "A"', outcome: 'success' },
      value: 7,
    });
  });

  it('reads unlabelled samples and exponent notation', () => {
    expect(valueOf(exposition, 'rpc_healthy_nodes')).toBe(2);
    expect(samplesOf(exposition, 'rpc_upstream_skips_total')[0]!.value).toBe(4500);
  });
});

describe('perNode', () => {
  it('sums a metric per node under a label filter', () => {
    const ok = perNode(exposition, 'rpc_upstream_attempts_total', { outcome: 'success' });
    expect([...ok]).toEqual([
      ['Helius-1', 120],
      ['Alchemy "A"', 7],
    ]);
    expect(perNode(exposition, 'rpc_upstream_attempts_total').get('Helius-1')).toBe(123);
  });
});

describe('parseExposition', () => {
  it('refuses a sample without a # TYPE line and a line that is no sample', () => {
    expect(() => parseExposition('rpc_healthy_nodes 2\n')).toThrow(/no # TYPE line/);
    expect(() => parseExposition('# TYPE x gauge\nx{broken 1\n')).toThrow(/not an exposition line/);
  });
});
