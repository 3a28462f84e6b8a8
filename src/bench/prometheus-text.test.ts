import { describe, expect, it } from 'vitest';
import { perNode, samplesOf } from './prometheus-text.js';

const TEXT = `# HELP rpc_upstream_attempts_total Attempts sent to upstream RPC nodes
# TYPE rpc_upstream_attempts_total counter
rpc_upstream_attempts_total{node="Helius-1",outcome="success"} 120
rpc_upstream_attempts_total{node="Helius-1",outcome="transport_error"} 3
rpc_upstream_attempts_total{node="Alchemy \\"A\\"",outcome="success"} 7
rpc_upstream_attempts_total_extra{node="Helius-1",outcome="success"} 999
rpc_upstream_skips_total{node="Helius-1",reason="rate_limit"} 4.5e3
rpc_healthy_nodes 2
rpc_node_healthy{node="Helius-1",tier="0"} 1
`;

describe('samplesOf', () => {
  it('reads labels (escaped quotes included) and values of one metric only', () => {
    const samples = samplesOf(TEXT, 'rpc_upstream_attempts_total');
    expect(samples).toHaveLength(3);
    expect(samples[2]).toEqual({ labels: { node: 'Alchemy "A"', outcome: 'success' }, value: 7 });
  });

  it('reads unlabelled samples and exponent notation', () => {
    expect(samplesOf(TEXT, 'rpc_healthy_nodes')).toEqual([{ labels: {}, value: 2 }]);
    expect(samplesOf(TEXT, 'rpc_upstream_skips_total')[0]!.value).toBe(4500);
  });
});

describe('perNode', () => {
  it('sums a metric per node under a label filter', () => {
    const ok = perNode(TEXT, 'rpc_upstream_attempts_total', { outcome: 'success' });
    expect([...ok]).toEqual([
      ['Helius-1', 120],
      ['Alchemy "A"', 7],
    ]);
    expect(perNode(TEXT, 'rpc_upstream_attempts_total').get('Helius-1')).toBe(123);
  });
});
