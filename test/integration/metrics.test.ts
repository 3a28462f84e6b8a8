import { afterEach, describe, expect, it } from 'vitest';
import os from 'node:os';
import { ManualClock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config/types.js';
import { ATTEMPT_OUTCOMES, DURATION_BUCKETS, SKIP_REASONS } from '../../src/core/metrics.js';
import { nextReset } from '../../src/core/quota/billing-period.js';
import { quotaReport } from '../../src/core/quota/quota-report.js';
import { nodeConfig } from '../support/node-config.js';
import {
  deltas,
  parseExposition,
  samplesOf,
  valueOf,
  type Exposition,
} from '../support/prometheus-text.js';
import { rpc, startHarness, type Harness, type TestNode } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startHeldUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

async function start(
  nodes: readonly TestNode[],
  options?: Parameters<typeof startHarness>[1],
): Promise<Harness> {
  harness = await startHarness(nodes, options);
  return harness;
}

async function scrape(h: Harness): Promise<Exposition> {
  return parseExposition(await h.metrics());
}

/**
 * Polls the scrape until `check` holds (no fixed sleeps). `timeoutMs` only bounds a failing
 * test: it is far past any event awaited here (the slowest is the 1 s ranking tick).
 */
async function scrapeUntil(
  h: Harness,
  check: (e: Exposition) => boolean,
  timeoutMs = 15_000,
): Promise<Exposition> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exposition = await scrape(h);
    if (check(exposition)) return exposition;
    if (Date.now() > deadline) throw new Error('the scrape never matched');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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

function nodesIn(e: Exposition): Set<string> {
  return new Set(e.samples.flatMap((s) => (s.labels.node === undefined ? [] : [s.labels.node])));
}

describe('/metrics exposition', () => {
  it('exports every metric with # HELP, # TYPE and its label set, every series at 0 from startup', async () => {
    const h = await start([
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
    const h = await start([{ name: 'free' }, { name: 'paid', monthlyLimit: 1000 }]);
    const text = await h.metrics();
    expect(text).toContain('rpc_node_quota_threshold{node="free"} +Inf\n');
    expect(text).toContain('rpc_node_quota_threshold{node="paid"} 950\n');
    expect(text).toContain('rpc_node_latency_ema_seconds{node="free",tier="0"} NaN\n');
    expect(text).not.toMatch(/ (Nan|Infinity|-?inf)$/m);
  });

  it('exports the default process metrics, without the *_total gauges promtool rejects', async () => {
    const h = await start([{ name: 'n' }]);
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
    const h = await start([{ name: 'n' }]);
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
    const h = await start([{ name: 'n' }]);
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
    const h = await start([{ name: 'n' }]);
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
      const h = await start([{ name: 'n', mock }]);
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
    const h = await start([{ name: 'n' }]);
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

/** Skip deltas across `act`, after `prepare` has run. */
async function skipDeltas(h: Harness, act: () => Promise<unknown>): Promise<Map<string, number>> {
  const before = await scrape(h);
  await act();
  return deltas(before, await scrape(h), 'rpc_upstream_skips_total');
}

function expectOnlySkip(changed: Map<string, number>, node: string, reason: string): void {
  const own = `rpc_upstream_skips_total{node="${node}",reason="${reason}"}`;
  expect([...changed.keys()]).toEqual([own]);
  expect(changed.get(own)).toBeGreaterThanOrEqual(1);
}

describe('skip reasons', () => {
  it('rate_limit: a node whose bucket is empty is skipped, then the request sleeps', async () => {
    const clock = new ManualClock(1000);
    const h = await start([{ name: 'n', rpsLimit: 2 }], { clock });
    await h.post(rpc('getSlot'));
    await h.post(rpc('getSlot'));
    const changed = await skipDeltas(h, async () => {
      const third = h.post(rpc('getSlot'));
      await scrapeUntil(h, (e) => valueOf(e, 'rpc_sleep_queue_size') === 1);
      clock.advance(500);
      expect((await third).status).toBe(200);
    });
    expectOnlySkip(changed, 'n', 'rate_limit');
  });

  it('quota_exhausted: a node past its spillover threshold is skipped', async () => {
    const h = await start([{ name: 'n', monthlyLimit: 10 }]);
    h.ledger.counter('n').add(10);
    const changed = await skipDeltas(h, async () => {
      expect((await h.post(rpc('getSlot'))).status).toBe(502);
    });
    expect(changed).toEqual(
      new Map([['rpc_upstream_skips_total{node="n",reason="quota_exhausted"}', 1]]),
    );
  });

  it('method_unsupported: a node whose price list does not price the method is skipped', async () => {
    const h = await start([{ name: 'n', prices: { getBalance: 1 }, unknownCost: null }]);
    const changed = await skipDeltas(h, async () => {
      expect((await h.post(rpc('getSlot'))).status).toBe(502);
    });
    expect(changed).toEqual(
      new Map([['rpc_upstream_skips_total{node="n",reason="method_unsupported"}', 1]]),
    );
  });

  it('saturated: a node at max_concurrent is skipped, then the request waits for a permit', async () => {
    const h = await start([{ name: 'n', maxConcurrent: 1 }], { clock: new ManualClock(1000) });
    const n = await startHeldUpstream();
    pointAt(h, 'n', n.url);
    const changed = await skipDeltas(h, async () => {
      const first = h.post(rpc('getSlot', 1));
      await expect.poll(() => n.held).toBe(1);
      const second = h.post(rpc('getSlot', 2));
      await scrapeUntil(h, (e) => valueOf(e, 'rpc_sleep_queue_size') === 1);
      n.open();
      const answers = await Promise.all([first, second]);
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
    });
    expectOnlySkip(changed, 'n', 'saturated');
  });

  it('penalized: a node serving a penalty is skipped while another serves', async () => {
    const h = await start([
      { name: 'bad', tier: 0, mock: { fault: { kind: 'close' } } },
      { name: 'good', tier: 1 },
    ]);
    expect((await h.post(rpc('getSlot'))).status).toBe(200);
    const changed = await skipDeltas(h, async () => {
      expect((await h.post(rpc('getSlot'))).status).toBe(200);
    });
    expect(changed).toEqual(
      new Map([['rpc_upstream_skips_total{node="bad",reason="penalized"}', 1]]),
    );
  });
});

describe('rpc_sleep_queue_size', () => {
  it('counts a request sleeping for a rate-limit token and returns to 0', async () => {
    const clock = new ManualClock(1000);
    const h = await start([{ name: 'n', rpsLimit: 2 }], { clock });
    await h.post(rpc('getSlot'));
    await h.post(rpc('getSlot'));
    const sleeping = h.post(rpc('getSlot'));
    await scrapeUntil(h, (e) => valueOf(e, 'rpc_sleep_queue_size') === 1);
    clock.advance(500);
    expect((await sleeping).status).toBe(200);
    expect(valueOf(await scrape(h), 'rpc_sleep_queue_size')).toBe(0);
  });

  it('counts a request waiting for a concurrency permit and returns to 0', async () => {
    const h = await start([{ name: 'n', maxConcurrent: 1 }], { clock: new ManualClock(1000) });
    const n = await startHeldUpstream();
    pointAt(h, 'n', n.url);
    const first = h.post(rpc('getSlot', 1));
    await expect.poll(() => n.held).toBe(1);
    const second = h.post(rpc('getSlot', 2));
    await scrapeUntil(h, (e) => valueOf(e, 'rpc_sleep_queue_size') === 1);
    n.open();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(valueOf(await scrape(h), 'rpc_sleep_queue_size')).toBe(0);
  });

  it('returns to 0 when the budget runs out while sleeping', async () => {
    const clock = new ManualClock(1000);
    const h = await start([{ name: 'n', rpsLimit: 1 }], { budgetMs: 200, clock });
    await h.post(rpc('getSlot'));
    const late = h.post(rpc('getSlot'));
    await scrapeUntil(h, (e) => valueOf(e, 'rpc_sleep_queue_size') === 1);
    clock.advance(200);
    expect((await late).status).toBe(504);
    const e = await scrape(h);
    expect(valueOf(e, 'rpc_sleep_queue_size')).toBe(0);
    expect(valueOf(e, 'rpc_requests_total', { outcome: 'timeout' })).toBe(1);
  });
});

describe('node health gauges', () => {
  it('publish a penalty at once and an EMA after a success', async () => {
    const clock = new ManualClock(1000);
    const h = await start(
      [
        { name: 'bad', tier: 0, mock: { fault: { kind: 'close' } } },
        { name: 'good', tier: 1 },
      ],
      { clock },
    );
    const good = await startHeldUpstream();
    pointAt(h, 'good', good.url);
    const pending = h.post(rpc('getSlot'));
    await expect.poll(() => good.held).toBe(1);
    clock.advance(5); // good answers 5 ms after it was asked, on the proxy's clock
    good.release();
    expect((await pending).status).toBe(200);
    // The ranking tick publishes health once a second.
    const e = await scrapeUntil(h, (x) => valueOf(x, 'rpc_node_healthy', { node: 'bad' }) === 0);
    expect(valueOf(e, 'rpc_node_healthy', { node: 'bad' })).toBe(0);
    expect(valueOf(e, 'rpc_node_healthy', { node: 'good' })).toBe(1);
    expect(valueOf(e, 'rpc_healthy_nodes')).toBe(1);
    expect(valueOf(e, 'rpc_node_latency_ema_seconds', { node: 'bad' })).toBeNaN();
    expect(valueOf(e, 'rpc_node_latency_ema_seconds', { node: 'good' })).toBe(0.005);
  });
});

describe('series follow reloads', () => {
  function reloaded(h: Harness, nodes: Config['nodes']): void {
    h.server.reload({ ...h.server.config, nodes });
  }

  it('drops removed nodes, adds new ones at 0, keeps survivors and moves a changed tier', async () => {
    const h = await start([
      { name: 'a', tier: 0 },
      { name: 'b', tier: 0, monthlyLimit: 1000 },
    ]);
    await h.post(rpc('getSlot'));
    const a = h.server.nodes().find((node) => node.name === 'a')!;
    const c = nodeConfig({ name: 'c', url: h.mocks.b!.url, redactedUrl: h.mocks.b!.url });
    reloaded(h, [{ ...a, tier: 1 }, c]);
    const e = await scrape(h);
    expect(nodesIn(e)).toEqual(new Set(['a', 'c']));
    expect(samplesOf(e, 'rpc_upstream_attempts_total', { node: 'c' })).toHaveLength(7);
    expect(samplesOf(e, 'rpc_upstream_duration_seconds_count', { node: 'c' })).toHaveLength(7);
    expect(samplesOf(e, 'rpc_upstream_skips_total', { node: 'c' })).toHaveLength(5);
    expect(
      samplesOf(e, 'rpc_upstream_attempts_total', { node: 'c' }).every((s) => s.value === 0),
    ).toBe(true);
    expect(valueOf(e, 'rpc_node_healthy', { node: 'c', tier: '0' })).toBe(1);
    expect(valueOf(e, 'rpc_node_latency_ema_seconds', { node: 'c' })).toBeNaN();
    expect(valueOf(e, 'rpc_node_quota_used', { node: 'c' })).toBe(0);
    expect(valueOf(e, 'rpc_node_quota_threshold', { node: 'c' })).toBe(Infinity);
    expect(samplesOf(e, 'rpc_node_healthy', { node: 'a' }).map((s) => s.labels.tier)).toEqual([
      '1',
    ]);
    expect(
      samplesOf(e, 'rpc_node_latency_ema_seconds', { node: 'a' }).map((s) => s.labels.tier),
    ).toEqual(['1']);
    expect(valueOf(e, 'rpc_upstream_attempts_total', { node: 'a', outcome: 'success' })).toBe(1);
    expect(valueOf(e, 'rpc_healthy_nodes')).toBe(2);
  });

  it('does not bring back a removed node\u2019s series when its in-flight attempt ends', async () => {
    const h = await start(
      [
        { name: 'slow', tier: 0 },
        { name: 'fast', tier: 1 },
      ],
      { clock: new ManualClock(1000) },
    );
    const slow = await startHeldUpstream();
    pointAt(h, 'slow', slow.url);
    const pending = h.post(rpc('getSlot'));
    await expect.poll(() => slow.held).toBe(1);
    const fast = h.server.nodes().find((node) => node.name === 'fast')!;
    reloaded(h, [fast]);
    slow.release();
    expect((await pending).status).toBe(200);
    expect(nodesIn(await scrape(h))).toEqual(new Set(['fast']));
  });
});

describe('quota gauges', () => {
  function report(h: Harness) {
    return quotaReport(
      h.server.nodes(),
      (name) => ({ used: h.ledger.counter(name).used, periodStart: h.ledger.periodStart(name) }),
      new Date(),
    );
  }

  it('match the quota report live at scrape time, with no flush in between', async () => {
    const h = await start([
      {
        name: 'metered',
        tier: 0,
        monthlyLimit: 1000,
        prices: { getBalance: 5 },
        unknownCost: null,
      },
      { name: 'free', tier: 1, prices: { getSlot: 1 }, unknownCost: null },
    ]);
    for (let i = 0; i < 3; i++) await h.post(rpc('getBalance'));
    await h.post(rpc('getSlot'));
    h.ledger.counter('metered').add(100);
    const e = await scrape(h);
    const rows = report(h);
    expect(rows.map((row) => row.used)).toEqual([115, 1]);
    for (const row of rows) {
      expect(valueOf(e, 'rpc_node_quota_used', { node: row.name })).toBe(row.used);
      expect(valueOf(e, 'rpc_node_quota_threshold', { node: row.name })).toBe(
        row.threshold ?? Infinity,
      );
    }
  });

  it('render the billing period end a quota source passes (rpc_node_quota_period_end_timestamp_seconds)', async () => {
    const h = await start([{ name: 'a', monthlyLimit: 1000, resetDay: 15 }]);
    const end = Date.parse(`${nextReset(new Date(), 15)}T00:00:00Z`) / 1000;
    h.server.metrics.setQuotaSource(() => [{ name: 'a', used: 1, threshold: 950, periodEnd: end }]);
    const e = await scrape(h);
    expect(e.families.get('rpc_node_quota_period_end_timestamp_seconds')?.type).toBe('gauge');
    expect(valueOf(e, 'rpc_node_quota_period_end_timestamp_seconds', { node: 'a' })).toBe(end);
  });

  it('export each node\u2019s billing period end from the server itself', async () => {
    const h = await start([{ name: 'a', monthlyLimit: 1000, resetDay: 15 }]);
    const e = await scrape(h);
    expect(samplesOf(e, 'rpc_node_quota_period_end_timestamp_seconds')).toHaveLength(1);
    const row = report(h)[0]!;
    expect(valueOf(e, 'rpc_node_quota_period_end_timestamp_seconds', { node: 'a' })).toBe(
      Date.parse(`${row.next_reset}T00:00:00Z`) / 1000,
    );
  });
});

describe('metrics_port', () => {
  it('serves /metrics only on the loopback listener; the main port then answers 404', async () => {
    const h = await start([{ name: 'n' }], { server: { metricsPort: 0 } });
    const port = h.server.metricsPort;
    expect(port).toBeGreaterThan(0);
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('# TYPE rpc_requests_total counter');
    expect((await fetch(`${h.url}/metrics`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('is not reachable on a non-loopback address', async (ctx) => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal);
    if (!external) ctx.skip('this machine has no non-loopback IPv4 address to try');
    const h = await start([{ name: 'n' }], { server: { metricsPort: 0 } });
    await expect(
      // Refused, or dropped by a firewall: either way no answer.
      fetch(`http://${external!.address}:${h.server.metricsPort}/metrics`, {
        signal: AbortSignal.timeout(2000),
      }),
    ).rejects.toThrow();
  });
});
