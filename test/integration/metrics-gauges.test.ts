/** /metrics through the real server: skips, sleeps, node health, reloads, quotas, metrics_port. */
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import { ManualClock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config/types.js';
import { nextReset } from '../../src/core/quota/billing-period.js';
import { quotaReport } from '../../src/core/quota/quota-report.js';
import { nodeConfig } from '../support/node-config.js';
import { samplesOf, valueOf } from '../../src/bench/prometheus-text.js';
import { rpc, type Harness } from '../support/proxy-harness.js';
import { pointAt, startHeldUpstream } from '../support/upstreams.js';

import {
  closeHarnessAfterEach,
  nodesIn,
  scrape,
  scrapeUntil,
  expectOnlySkip,
  skipDeltas,
  startProxy,
} from '../support/metrics-scrape.js';

closeHarnessAfterEach();

describe('skip reasons', () => {
  it('rate_limit: a node whose bucket is empty is skipped, then the request sleeps', async () => {
    const clock = new ManualClock(1000);
    const h = await startProxy([{ name: 'n', rpsLimit: 2 }], { clock });
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
    const h = await startProxy([{ name: 'n', monthlyLimit: 10 }]);
    h.ledger.counter('n').add(10);
    const changed = await skipDeltas(h, async () => {
      expect((await h.post(rpc('getSlot'))).status).toBe(502);
    });
    expect(changed).toEqual(
      new Map([['rpc_upstream_skips_total{node="n",reason="quota_exhausted"}', 1]]),
    );
  });

  it('method_unsupported: a node whose price list does not price the method is skipped', async () => {
    const h = await startProxy([{ name: 'n', prices: { getBalance: 1 }, unknownCost: null }]);
    const changed = await skipDeltas(h, async () => {
      expect((await h.post(rpc('getSlot'))).status).toBe(502);
    });
    expect(changed).toEqual(
      new Map([['rpc_upstream_skips_total{node="n",reason="method_unsupported"}', 1]]),
    );
  });

  it('saturated: a node at max_concurrent is skipped, then the request waits for a permit', async () => {
    const h = await startProxy([{ name: 'n', maxConcurrent: 1 }], { clock: new ManualClock(1000) });
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
    const h = await startProxy([
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
    const h = await startProxy([{ name: 'n', rpsLimit: 2 }], { clock });
    await h.post(rpc('getSlot'));
    await h.post(rpc('getSlot'));
    const sleeping = h.post(rpc('getSlot'));
    await scrapeUntil(h, (e) => valueOf(e, 'rpc_sleep_queue_size') === 1);
    clock.advance(500);
    expect((await sleeping).status).toBe(200);
    expect(valueOf(await scrape(h), 'rpc_sleep_queue_size')).toBe(0);
  });

  it('counts a request waiting for a concurrency permit and returns to 0', async () => {
    const h = await startProxy([{ name: 'n', maxConcurrent: 1 }], { clock: new ManualClock(1000) });
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
    const h = await startProxy([{ name: 'n', rpsLimit: 1 }], { budgetMs: 200, clock });
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
    const h = await startProxy(
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
    const h = await startProxy([
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
    const h = await startProxy(
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
    const h = await startProxy([
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
    const h = await startProxy([{ name: 'a', monthlyLimit: 1000, resetDay: 15 }]);
    const end = Date.parse(`${nextReset(new Date(), 15)}T00:00:00Z`) / 1000;
    h.server.metrics.setQuotaSource(() => [{ name: 'a', used: 1, threshold: 950, periodEnd: end }]);
    const e = await scrape(h);
    expect(e.families.get('rpc_node_quota_period_end_timestamp_seconds')?.type).toBe('gauge');
    expect(valueOf(e, 'rpc_node_quota_period_end_timestamp_seconds', { node: 'a' })).toBe(end);
  });

  it('export each node\u2019s billing period end from the server itself', async () => {
    const h = await startProxy([{ name: 'a', monthlyLimit: 1000, resetDay: 15 }]);
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
    const h = await startProxy([{ name: 'n' }], { server: { metricsPort: 0 } });
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
    const h = await startProxy([{ name: 'n' }], { server: { metricsPort: 0 } });
    await expect(
      // Refused, or dropped by a firewall: either way no answer.
      fetch(`http://${external!.address}:${h.server.metricsPort}/metrics`, {
        signal: AbortSignal.timeout(2000),
      }),
    ).rejects.toThrow();
  });
});
