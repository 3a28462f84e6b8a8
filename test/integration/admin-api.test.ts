/**
 * The operator's admin API on a running cascade (startCascade, as `cascade serve` runs it):
 * the node table, cordon under load, reload, and the bearer token.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Config, LoadResult, ServerConfig } from '../../src/core/config/types.js';
import { createPromMetrics } from '../../src/core/prom-metrics.js';
import { startCascade, type Cascade } from '../../src/core/service.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { TEST_REGISTRY, nodeConfig } from '../support/node-config.js';
import { rpc, serverConfig } from '../support/proxy-harness.js';
import { closeUpstreams, startHeldUpstream, startUpstream } from '../support/upstreams.js';

let cascade: Cascade | undefined;
let temp: TempDir | undefined;

afterEach(async () => {
  await cascade?.close();
  cascade = undefined;
  await closeUpstreams();
  temp?.cleanup();
  temp = undefined;
});

/** An upstream that answers at once and counts what it got. */
async function startCounting(): Promise<{ url: string; received: () => number }> {
  let received = 0;
  const url = await startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'b' }));
    });
  });
  return { url, received: () => received };
}

interface Started {
  readonly url: string;
  readonly admin: string;
  readonly logs: string[];
}

async function start(
  nodes: Config['nodes'],
  server: Partial<ServerConfig> = {},
  reloadSource?: () => LoadResult,
): Promise<Started> {
  temp = makeTempDir('cascade-admin-');
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const config: Config = {
    path: '/test/config.toml',
    // Held requests must not time out while the test looks at them.
    server: serverConfig({
      adminPort: 0,
      requestTimeoutMs: 60_000,
      attemptTimeoutMs: 30_000,
      ...server,
    }),
    nodes,
  };
  cascade = await startCascade({
    config,
    registry: TEST_REGISTRY,
    logger: pino({ level: 'info' }, sink),
    version: '0.0.0-test',
    quotasPath: `${temp.dir}/quotas.json`,
    metrics: createPromMetrics({ version: '0.0.0-test' }),
    reloadSource,
  });
  return {
    url: `http://127.0.0.1:${cascade.server.port}`,
    admin: `http://127.0.0.1:${cascade.adminPort}`,
    logs,
  };
}

function send(url: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpc('getSlot')),
  });
}

async function nodesOf(admin: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${admin}/admin/nodes`, { headers });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    workers: number;
    nodes: Array<Record<string, unknown>>;
    events: Array<Record<string, unknown>>;
  };
}

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

describe('POST /admin/nodes/{name}/cordon', () => {
  it('sends the node nothing new once the call returns, lets in-flight requests finish, and uncordon brings traffic back', async () => {
    const a = await startHeldUpstream();
    const b = await startCounting();
    const s = await start([
      nodeConfig({ name: 'a', url: a.url, tier: 0 }),
      nodeConfig({ name: 'b', url: b.url, tier: 1 }),
    ]);
    const inFlight = [send(s.url), send(s.url), send(s.url)];
    await vi.waitFor(() => expect(a.held).toBe(3));

    const cordon = await fetch(`${s.admin}/admin/nodes/a/cordon`, { method: 'POST' });
    expect(cordon.status).toBe(200);
    expect(await cordon.json()).toEqual({ node: 'a', cordoned: true });
    const during = await Promise.all(Array.from({ length: 5 }, () => send(s.url)));
    expect(during.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(a.received).toBe(3);
    expect(b.received()).toBe(5);

    a.release();
    const finished = await Promise.all(inFlight);
    expect(finished.map((r) => r.status)).toEqual([200, 200, 200]);
    const answers = (await Promise.all(finished.map((r) => r.json()))) as Array<{ result: number }>;
    expect(answers.map((answer) => answer.result)).toEqual([1, 2, 3]);

    const health = (await (await fetch(`${s.url}/health`)).json()) as {
      status: string;
      nodes: Array<Record<string, unknown>>;
    };
    expect(health.status).toBe('degraded');
    expect(health.nodes[0]).toMatchObject({ name: 'a', cordoned: true });
    expect((await nodesOf(s.admin)).nodes[0]).toMatchObject({ state: 'cordoned', cordoned: true });
    await vi.waitFor(async () => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      expect(text).toContain('rpc_node_cordoned{node="a"} 1');
    });
    expect(s.logs.join('')).toContain('node cordoned: no new requests until uncordon or restart');

    const uncordon = await fetch(`${s.admin}/admin/nodes/a/uncordon`, { method: 'POST' });
    expect(await uncordon.json()).toEqual({ node: 'a', cordoned: false });
    a.open();
    expect((await send(s.url)).status).toBe(200);
    expect(a.received).toBe(4);
    expect(b.received()).toBe(5);
    const events = (await nodesOf(s.admin)).events.map((e) => e.kind);
    expect(events).toEqual(['cordoned', 'uncordoned']);
  });

  it('answers 404 naming the known nodes for an unknown one, 405 for GET', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })]);
    const unknown = await fetch(`${s.admin}/admin/nodes/zz/cordon`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'unknown node "zz"; known nodes: a' });
    expect((await fetch(`${s.admin}/admin/nodes/a/cordon`)).status).toBe(405);
  });

  it('keeps the cordon through a reload that keeps the node', async () => {
    const b = await startCounting();
    const nodes = [
      nodeConfig({ name: 'a', url: b.url }),
      nodeConfig({ name: 'b', url: b.url, tier: 1 }),
    ];
    let next: Config['nodes'] = nodes;
    const s = await start(nodes, {}, () => ({
      config: { path: '/test/config.toml', server: cascade!.server.config.server, nodes: next },
      path: '/test/config.toml',
      errors: [],
      warnings: [],
    }));
    await fetch(`${s.admin}/admin/nodes/a/cordon`, { method: 'POST' });
    next = [{ ...nodes[0]!, rpsLimit: 10 }, nodes[1]!];
    const reload = await fetch(`${s.admin}/admin/reload`, { method: 'POST' });
    expect(reload.status).toBe(200);
    expect(await reload.json()).toEqual({
      ok: true,
      added: [],
      removed: [],
      changed: ['a: rps_limit'],
      needs_restart: [],
    });
    expect((await nodesOf(s.admin)).nodes[0]).toMatchObject({ name: 'a', state: 'cordoned' });
  });
});

describe('POST /admin/reload', () => {
  it('answers the errors as JSON when the reload is refused', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })]);
    const reload = await fetch(`${s.admin}/admin/reload`, { method: 'POST' });
    expect(reload.status).toBe(422);
    expect(await reload.json()).toEqual({
      ok: false,
      problems: ['there is no config file to reload (the demo runs built-in mock nodes)'],
    });
  });
});

describe('the status page on the metrics port', () => {
  it('serves the page and the table there, read-only', async () => {
    const b = await startCounting();
    await start([nodeConfig({ name: 'a', url: b.url })], { enableMetrics: true, metricsPort: 0 });
    const metrics = `http://127.0.0.1:${cascade!.server.metricsPort}`;
    expect(await (await fetch(`${metrics}/status`)).text()).toContain('<tr data-node="a">');
    expect((await nodesOf(metrics)).nodes.map((n) => String(n.name))).toEqual(['a']);
    const cordon = await fetch(`${metrics}/admin/nodes/a/cordon`, { method: 'POST' });
    expect(cordon.status).toBe(404);
  });
});

describe('the admin token', () => {
  it('answers 401 without "Authorization: Bearer <token>", and serves the page without data', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a', url: b.url })], { adminToken: 's3cret' });
    const bare = await fetch(`${s.admin}/admin/nodes`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer');
    const wrong = await fetch(`${s.admin}/admin/nodes/a/cordon`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${s.admin}/admin/quota`)).status).toBe(401);
    const doc = await nodesOf(s.admin, { authorization: 'Bearer s3cret' });
    expect(doc.nodes.map((n) => n.name)).toEqual(['a']);
    const page = await fetch(`${s.admin}/status`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain('data-node="a"');
    expect(s.logs.join('')).not.toContain('s3cret');
  });

  it('renders the table into the page on loopback without a token', async () => {
    const b = await startCounting();
    const s = await start([nodeConfig({ name: 'a<b>', url: b.url })]);
    const page = await fetch(`${s.admin}/status`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    const html = await page.text();
    expect(html).toContain('<tr data-node="a&lt;b&gt;"><td>a&lt;b&gt;</td>');
  });
});
