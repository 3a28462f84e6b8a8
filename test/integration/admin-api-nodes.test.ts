/**
 * The node table of the admin API on a running cascade (startCascade, as `cascade serve` runs
 * it), and the read-only copy of it on the metrics port.
 */
import { describe, expect, it } from 'vitest';
import { nodesOf, send, startCounting, useAdminCascade } from '../support/admin-harness.js';
import { nodeConfig } from '../support/node-config.js';
import { startUpstream } from '../support/upstreams.js';

const start = useAdminCascade();

describe('GET /admin/nodes', () => {
  it('describes every node: rank, state, limits, usage and recent traffic', async () => {
    const b = await startCounting();
    const s = await start([
      nodeConfig({ name: 'a', url: b.url, tier: 0, rpsLimit: 50, maxConcurrent: 8 }),
      nodeConfig({
        name: 'b',
        url: 'http://127.0.0.1:9',
        tier: 1,
        monthlyLimit: 1000,
        spilloverThreshold: 950,
      }),
    ]);
    expect((await send(s.url)).status).toBe(200);
    const doc = await nodesOf(s.admin);
    expect(doc.workers).toBe(1);
    const [a, bRow] = doc.nodes;
    expect(a).toMatchObject({
      name: 'a',
      tier: 0,
      rank: 1,
      state: 'up',
      cordoned: false,
      penalized_until: null,
      penalty_reason: null,
      rps_limit: 50,
      in_flight: 0,
      max_concurrent: 8,
      credits_used: 1,
      spillover_threshold: null,
      monthly_limit: null,
      requests_last_minute: 1,
      failures_last_minute: 0,
    });
    expect(a!.latency_ms).toEqual(expect.any(Number));
    expect(a!.next_reset).toMatch(/^\d{4}-\d\d-\d\d$/);
    expect(bRow).toMatchObject({
      name: 'b',
      tier: 1,
      rank: 2,
      state: 'unknown',
      latency_ms: null,
      rps_limit: null,
      credits_used: 0,
      spillover_threshold: 950,
      monthly_limit: 1000,
    });
  });

  it('shows a penalty with its reason and end, and the event', async () => {
    const dead = await startUpstream((_req, res) => res.writeHead(503).end());
    const b = await startCounting();
    const s = await start([
      nodeConfig({ name: 'a', url: dead, tier: 0 }),
      nodeConfig({ name: 'b', url: b.url, tier: 1 }),
    ]);
    expect((await send(s.url)).status).toBe(200);
    const doc = await nodesOf(s.admin);
    expect(doc.nodes[0]).toMatchObject({
      name: 'a',
      state: 'penalized',
      penalty_reason: 'HTTP 503, invalid JSON-RPC answer',
      failures_last_minute: 1,
    });
    expect(Date.parse(String(doc.nodes[0]!.penalized_until))).toBeGreaterThan(Date.now());
    expect(doc.events).toEqual([
      expect.objectContaining({
        node: 'a',
        kind: 'penalized',
        detail: 'HTTP 503, invalid JSON-RPC answer',
      }),
    ]);
  });
});

describe('the status page on the metrics port', () => {
  it('serves the page and the table there, read-only', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })], {
      enableMetrics: true,
      metricsPort: 0,
    });
    const metrics = `http://127.0.0.1:${s.cascade.server.metricsPort}`;
    expect(await (await fetch(`${metrics}/status`)).text()).toContain('<tr data-node="a">');
    expect((await nodesOf(metrics)).nodes.map((n) => String(n.name))).toEqual(['a']);
    const cordon = await fetch(`${metrics}/admin/nodes/a/cordon`, { method: 'POST' });
    expect(cordon.status).toBe(404);
  });
});
