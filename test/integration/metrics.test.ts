/** /metrics through the real server: the exposition, batch sizes and attempt outcomes. */
import { describe, expect, it } from 'vitest';
import { ATTEMPT_OUTCOMES, DURATION_BUCKETS, SKIP_REASONS } from '../../src/core/metrics.js';
import { deltas, parseExposition, samplesOf, valueOf } from '../../src/bench/prometheus-text.js';
import { rpc } from '../support/proxy-harness.js';

import { closeHarnessAfterEach, scrape, startProxy } from '../support/metrics-scrape.js';

closeHarnessAfterEach();

const REQUEST_OUTCOMES = ['forwarded', 'bad_request', 'bad_gateway', 'timeout'];

/** name → [type, label names of its samples (sorted), HELP] for everything cascade defines. */
const FAMILIES: Record<string, [string, string[], string]> = {
  rpc_requests_total: ['counter', ['outcome'], 'Client requests handled by CascadeRPC'],
  rpc_request_duration_seconds: [
    'histogram',
    ['outcome'],
    'End-to-end CascadeRPC request duration',
  ],
  rpc_upstream_attempts_total: [
    'counter',
    ['node', 'outcome'],
    'Attempts sent to upstream RPC nodes',
  ],
  rpc_upstream_duration_seconds: [
    'histogram',
    ['node', 'outcome'],
    'Upstream RPC attempt duration',
  ],
  rpc_upstream_skips_total: [
    'counter',
    ['node', 'reason'],
    'Nodes passed over without sending a request',
  ],
  rpc_sleep_queue_size: [
    'gauge',
    [],
    'Number of requests currently sleeping while all RPC nodes are rate-limited',
  ],
  rpc_node_healthy: [
    'gauge',
    ['node', 'tier'],
    'Whether an RPC node is free of penalties from its recent traffic',
  ],
  rpc_healthy_nodes: ['gauge', [], 'Number of RPC nodes not currently serving a penalty'],
  rpc_node_latency_ema_seconds: [
    'gauge',
    ['node', 'tier'],
    "Moving average of an RPC node's answered attempts",
  ],
  rpc_node_quota_used: ['gauge', ['node'], 'Usage a node has booked in the current billing period'],
  rpc_node_quota_threshold: [
    'gauge',
    ['node'],
    'Usage past which the router stops routing to a node',
  ],
  rpc_batch_size: ['histogram', [], 'Elements per JSON-RPC batch request'],
  cascade_build_info: [
    'gauge',
    ['node_version', 'version'],
    'cascade version and the Node.js runtime it runs on',
  ],
};

function labelNames(labels: Readonly<Record<string, string>>): string[] {
  return Object.keys(labels)
    .filter((label) => label !== 'le')
    .sort();
}

describe('/metrics exposition', () => {
  it('exports every metric with # HELP, # TYPE and its label set, every series at 0 from startup', async () => {
    const h = await startProxy([
      { name: 'a', tier: 0 },
      { name: 'b', tier: 1, monthlyLimit: 1000 },
    ]);
    const e = await scrape(h);
    for (const [name, [type, labels, help]] of Object.entries(FAMILIES)) {
      const family = e.families.get(name);
      expect(family, name).toBeDefined();
      expect(family!.type, name).toBe(type);
      expect(family!.help, name).toBe(help);
      expect(family!.samples.length, `${name} has series`).toBeGreaterThan(0);
      for (const sample of family!.samples) expect(labelNames(sample.labels), name).toEqual(labels);
    }
    for (const outcome of REQUEST_OUTCOMES) {
      expect(valueOf(e, 'rpc_requests_total', { outcome })).toBe(0);
      expect(valueOf(e, 'rpc_request_duration_seconds_count', { outcome })).toBe(0);
    }
    for (const node of ['a', 'b']) {
      for (const outcome of ATTEMPT_OUTCOMES) {
        expect(valueOf(e, 'rpc_upstream_attempts_total', { node, outcome })).toBe(0);
        expect(valueOf(e, 'rpc_upstream_duration_seconds_count', { node, outcome })).toBe(0);
        expect(
          valueOf(e, 'rpc_upstream_duration_seconds_bucket', { node, outcome, le: '+Inf' }),
        ).toBe(0);
      }
      for (const reason of SKIP_REASONS) {
        expect(valueOf(e, 'rpc_upstream_skips_total', { node, reason })).toBe(0);
      }
      expect(valueOf(e, 'rpc_node_latency_ema_seconds', { node })).toBeNaN();
      expect(valueOf(e, 'rpc_node_quota_used', { node })).toBe(0);
    }
    expect(samplesOf(e, 'rpc_upstream_attempts_total')).toHaveLength(2 * ATTEMPT_OUTCOMES.length);
    expect(samplesOf(e, 'rpc_upstream_skips_total')).toHaveLength(2 * SKIP_REASONS.length);
    expect(valueOf(e, 'rpc_node_healthy', { node: 'a', tier: '0' })).toBe(1);
    expect(valueOf(e, 'rpc_node_healthy', { node: 'b', tier: '1' })).toBe(1);
    expect(valueOf(e, 'rpc_healthy_nodes')).toBe(2);
    expect(valueOf(e, 'rpc_sleep_queue_size')).toBe(0);
    expect(valueOf(e, 'rpc_node_quota_threshold', { node: 'a' })).toBe(Infinity);
    expect(valueOf(e, 'rpc_node_quota_threshold', { node: 'b' })).toBe(950);
    expect(valueOf(e, 'rpc_batch_size_count')).toBe(0);
    expect(valueOf(e, 'cascade_build_info', { version: '0.0.0-test' })).toBe(1);
    expect(samplesOf(e, 'cascade_build_info')[0]!.labels.node_version).toBe(process.version);
  });

  it('renders thresholds as plain decimals, an unmetered one as +Inf, an unmeasured EMA as NaN', async () => {
    const h = await startProxy([{ name: 'free' }, { name: 'paid', monthlyLimit: 1000 }]);
    const text = await h.metrics();
    expect(text).toContain('rpc_node_quota_threshold{node="free"} +Inf\n');
    expect(text).toContain('rpc_node_quota_threshold{node="paid"} 950\n');
    expect(text).toContain('rpc_node_latency_ema_seconds{node="free",tier="0"} NaN\n');
    expect(text).not.toMatch(/ (Nan|Infinity|-?inf)$/m);
  });

  it('exports the default process metrics, without the *_total gauges promtool rejects', async () => {
    const h = await startProxy([{ name: 'n' }]);
    const e = await scrape(h);
    expect(e.families.get('process_cpu_seconds_total')?.type).toBe('counter');
    expect(e.families.get('process_resident_memory_bytes')?.type).toBe('gauge');
    expect(e.families.get('nodejs_eventloop_lag_p99_seconds')?.type).toBe('gauge');
    expect(e.families.get('nodejs_heap_size_used_bytes')?.type).toBe('gauge');
    expect(e.families.get('nodejs_active_handles')?.type).toBe('gauge');
    for (const [name, family] of e.families) {
      if (name.endsWith('_total')) expect(family.type, name).toBe('counter');
    }
  });

  it('serves text/plain 0.0.4 with HELP and TYPE before every family', async () => {
    const h = await startProxy([{ name: 'n' }]);
    const response = await fetch(`${h.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const e = parseExposition(await response.text());
    for (const family of e.families.values()) {
      expect(family.help, family.name).toBeDefined();
      expect(family.type, family.name).toBeDefined();
    }
  });

  it('renders latency histograms with buckets from 0.1 ms to +Inf', async () => {
    const h = await startProxy([{ name: 'n' }]);
    await h.post(rpc('getSlot'));
    const e = await scrape(h);
    const expected = [...DURATION_BUCKETS.map(String), '+Inf'];
    expect(expected[0]).toBe('0.0001');
    for (const [name, labels] of [
      ['rpc_request_duration_seconds', { outcome: 'forwarded' }],
      ['rpc_upstream_duration_seconds', { node: 'n', outcome: 'success' }],
    ] as const) {
      const buckets = samplesOf(e, `${name}_bucket`, labels);
      expect(buckets.map((s) => s.labels.le)).toEqual(expected);
      const counts = buckets.map((s) => s.value);
      expect(counts).toEqual([...counts].sort((x, y) => x - y));
      expect(counts.at(-1)).toBe(1);
      expect(valueOf(e, `${name}_count`, labels)).toBe(1);
      expect(valueOf(e, `${name}_sum`, labels)).toBeGreaterThan(0);
    }
  });
});

describe('rpc_batch_size', () => {
  it('observes the element count of each batch and nothing for single requests', async () => {
    const h = await startProxy([{ name: 'n' }]);
    await h.post(rpc('getSlot'));
    await h.post([rpc('getSlot', 1), rpc('getBalance', 2), rpc('getSlot', 3)]);
    const e = await scrape(h);
    expect(valueOf(e, 'rpc_batch_size_count')).toBe(1);
    expect(valueOf(e, 'rpc_batch_size_sum')).toBe(3);
    expect(valueOf(e, 'rpc_batch_size_bucket', { le: '2' })).toBe(0);
    expect(valueOf(e, 'rpc_batch_size_bucket', { le: '5' })).toBe(1);
    expect(valueOf(e, 'rpc_requests_total', { outcome: 'forwarded' })).toBe(2);
  });
});

describe('attempt outcomes', () => {
  it.each([
    ['success', {}, 'forwarded'],
    ['forwarded_http_error', { fault: { kind: 'http', status: 404 } }, 'forwarded'],
    ['forwarded_rpc_error', { fault: { kind: 'rpc_error', code: -32601 } }, 'forwarded'],
    // The one node's error is the best answer there is: relayed, never a synthetic 502.
    ['retryable_rpc_error', { fault: { kind: 'rpc_error', code: -32005 } }, 'forwarded'],
    ['invalid_json', { fault: { kind: 'invalid_json' } }, 'bad_gateway'],
    ['body_error', { fault: { kind: 'truncate' } }, 'bad_gateway'],
    ['transport_error', { fault: { kind: 'close' } }, 'bad_gateway'],
  ] as const)(
    '%s increments exactly its own attempt and duration series',
    async (outcome, mock, requestOutcome) => {
      const h = await startProxy([{ name: 'n', mock }]);
      const before = await scrape(h);
      await h.post(rpc('getSlot'));
      const after = await scrape(h);
      const own = `{node="n",outcome="${outcome}"}`;
      expect(deltas(before, after, 'rpc_upstream_attempts_total')).toEqual(
        new Map([[`rpc_upstream_attempts_total${own}`, 1]]),
      );
      expect(deltas(before, after, 'rpc_upstream_duration_seconds_count')).toEqual(
        new Map([[`rpc_upstream_duration_seconds_count${own}`, 1]]),
      );
      expect(deltas(before, after, 'rpc_upstream_skips_total').size).toBe(0);
      expect(deltas(before, after, 'rpc_requests_total')).toEqual(
        new Map([[`rpc_requests_total{outcome="${requestOutcome}"}`, 1]]),
      );
      expect(deltas(before, after, 'rpc_request_duration_seconds_count')).toEqual(
        new Map([[`rpc_request_duration_seconds_count{outcome="${requestOutcome}"}`, 1]]),
      );
    },
  );

  it('counts a 400 as bad_request without touching any node series', async () => {
    const h = await startProxy([{ name: 'n' }]);
    const before = await scrape(h);
    expect((await h.post('not json')).status).toBe(400);
    const after = await scrape(h);
    expect(deltas(before, after, 'rpc_requests_total')).toEqual(
      new Map([['rpc_requests_total{outcome="bad_request"}', 1]]),
    );
    expect(deltas(before, after, 'rpc_upstream_attempts_total').size).toBe(0);
    expect(deltas(before, after, 'rpc_upstream_skips_total').size).toBe(0);
  });
});
