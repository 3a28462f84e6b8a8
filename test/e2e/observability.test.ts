/**
 * What an operator sees of a running `cascade serve`: the log lines (startup summary, access
 * log, penalties, period resets, quota thresholds, reloads, shutdown), /health, /metrics and
 * error bodies — and that a provider API key taken from the environment shows up in none of
 * them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { assertBuilt, runCli } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { parseExposition, samplesOf, valueOf } from '../support/prometheus-text.js';
import { freePort } from '../support/free-port.js';

const API_KEY = 'sk_fake_7Hq2ZxVb91LmN0pQ';
/** A provider's maintenance page: over 512 bytes and no `"error"`, so it is passed on as is. */
const FLAKY_PAGE = `<html><head><title>503 Service Unavailable</title></head><body>${'<p>Down for maintenance.</p>'.repeat(24)}</body></html>`;

type LogLine = Record<string, unknown> & { msg: string };

/** The JSON log lines printed so far (non-JSON lines are left out). */
function logLines(p: CliProcess): LogLine[] {
  return p
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        const parsed = JSON.parse(line) as LogLine | null;
        return parsed && typeof parsed === 'object' && 'msg' in parsed ? [parsed] : [];
      } catch {
        return [];
      }
    });
}

function linesWith(p: CliProcess, msg: string | RegExp): LogLine[] {
  return logLines(p).filter((line) =>
    typeof msg === 'string' ? line.msg === msg : msg.test(line.msg),
  );
}

function nodeBlock(name: string, url: string, prices: string, monthly: number, tier = 0): string {
  return `[[nodes]]\nname = "${name}"\nurl = "${url}"\ntier = ${tier}\nmonthly_limit = ${monthly}\nprovider_pricing_path = "${prices}"\n`;
}

describe('cascade serve observability (spawned, --access-log)', () => {
  let temp: TempDir;
  let mocks: MockNode[] = [];
  let p: CliProcess;
  let url = '';
  let adminPort = 0;
  let exitCode: number | null = null;
  /** Every body and document the server handed out, to search for the key. */
  const seen: string[] = [];
  // Deadlines far past any answer: the mocks share this test process, which a busy machine
  // can pause for longer than the default 500 ms attempt deadline (no test here is about them).
  const configFor = (nodes: string[]): string =>
    `[server]\nhost = "127.0.0.1"\nport = 0\nenable_metrics = true\nadmin_port = ${adminPort}\nquota_flush_seconds = 1\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000\n\n${nodes.join('\n')}`;
  let blocks: Record<string, string> = {};

  async function call(body: string): Promise<{ status: number; body: string }> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await response.text();
    seen.push(text);
    return { status: response.status, body: text };
  }

  async function get(path: string): Promise<string> {
    const text = await (await fetch(`${url}${path}`)).text();
    seen.push(text);
    return text;
  }

  beforeAll(async () => {
    assertBuilt();
    temp = makeTempDir('cascade-observability-');
    mocks = await startMockNodes([
      { name: 'primary' },
      { name: 'flaky', fault: { kind: 'http', status: 503, body: FLAKY_PAGE } },
      { name: 'broken', fault: { kind: 'close' } },
    ]);
    const [primary, flaky, broken] = mocks.map((mock) => mock.url);
    temp.write({
      'primary.toml': '[routing]\ngetBalance = 3\n',
      'flaky.toml': '[routing]\ngetSlot = 2\n',
      'broken.toml': '[routing]\ngetBlockHeight = 1\n',
      // An old period: the server resets it before serving, and says so.
      'quotas.json':
        '{\n  "primary": {\n    "used": 900,\n    "period_start": "2020-01-01"\n  }\n}',
    });
    adminPort = await freePort();
    blocks = {
      primary: nodeBlock('primary', `${primary}/v2/$FAKE_API_KEY`, 'primary.toml', 1000),
      flaky: nodeBlock('flaky', `${flaky}/?api-key=$FAKE_API_KEY`, 'flaky.toml', 0),
      broken: nodeBlock('broken', `${broken}/rpc?key=\${FAKE_API_KEY}`, 'broken.toml', 1, 1),
    };
    writeFileSync(temp.path('config.toml'), configFor(Object.values(blocks)));
    p = startCli(['serve', '--config', temp.path('config.toml'), '--access-log'], {
      cwd: temp.dir,
      env: { FAKE_API_KEY: API_KEY },
    });
    const line = await p.waitFor(/cascade serving/);
    url = (JSON.parse(line) as { url: string }).url;
  });

  afterAll(async () => {
    await p?.stop('SIGKILL');
    await Promise.all(mocks.map((mock) => mock.close()));
    temp?.cleanup();
  });

  it('logs a startup summary: one line per node with its URL redacted, then where it serves', () => {
    const nodes = linesWith(p, 'node');
    expect(nodes.map((line) => line.node)).toEqual(['primary', 'flaky', 'broken']);
    expect(nodes.map((line) => line.url)).toEqual([
      `${mocks[0]!.url}/v2/***`,
      `${mocks[1]!.url}/?api-key=***`,
      `${mocks[2]!.url}/rpc?key=***`,
    ]);
    expect(nodes[0]).toMatchObject({ tier: 0, monthly_limit: 1000 });
    expect(nodes[1]).toMatchObject({ monthly_limit: 'unmetered' });
    const [serving] = linesWith(p, 'cascade serving');
    expect(serving).toMatchObject({ url, nodes: 3, metrics: true });
    expect(serving!.quotas).toBe(temp.path('quotas.json'));
  });

  it('logs the billing period reset it applied at startup', () => {
    const [reset] = linesWith(p, /billing period reset/);
    expect(reset).toMatchObject({ node: 'primary', from: '2020-01-01', used_before: 900 });
  });

  it('writes one access-log line per routed request with method, node, attempts, outcome, ms and credits', async () => {
    expect((await call('{"jsonrpc":"2.0","id":1,"method":"getBalance"}')).status).toBe(200);
    const failed = await call('{"jsonrpc":"2.0","id":2,"method":"getSlot"}');
    expect(failed).toEqual({ status: 503, body: FLAKY_PAGE });
    const gateway = await call('{"jsonrpc":"2.0","id":3,"method":"getBlockHeight"}');
    expect(gateway.status).toBe(502);
    expect(JSON.parse(gateway.body)).toMatchObject({ error: { code: -32000 }, id: 3 });
    const unsupported = await call('{"jsonrpc":"2.0","id":4,"method":"getVersion"}');
    expect(unsupported.status).toBe(502);
    expect((await call('{"jsonrpc":"2.0",')).status).toBe(400);

    await p.waitFor(/"method":"getVersion"/);
    await p.waitFor(/"status":400/);
    const requests = linesWith(p, 'request');
    for (const line of requests) {
      for (const field of ['method', 'node', 'attempts', 'outcome', 'ms', 'credits']) {
        expect(line, field).toHaveProperty(field);
      }
      expect(typeof line.ms).toBe('number');
    }
    // The unparseable body is logged too, as a 400 routed nowhere.
    expect(requests.find((line) => line.status === 400)).toMatchObject({
      method: null,
      node: null,
      attempts: 0,
      credits: 0,
      outcome: 'bad_request',
    });
    const byMethod = Object.fromEntries(requests.map((line) => [line.method, line]));
    expect(byMethod.getBalance).toMatchObject({
      node: 'primary',
      status: 200,
      attempts: 1,
      outcome: 'forwarded',
      credits: 3,
    });
    expect(byMethod.getSlot).toMatchObject({
      node: 'flaky',
      status: 503,
      attempts: 1,
      outcome: 'forwarded',
      credits: 2,
    });
    expect(byMethod.getBlockHeight).toMatchObject({
      node: null,
      attempts: 1,
      outcome: 'bad_gateway',
      credits: 1,
    });
    expect(byMethod.getVersion).toMatchObject({ node: null, attempts: 0, outcome: 'bad_gateway' });
  });

  it('logs each node penalty with its reason and duration in seconds', () => {
    const penalized = linesWith(p, 'node penalized');
    const flaky = penalized.find((line) => line.node === 'flaky');
    expect(flaky).toMatchObject({ reason: 'HTTP 503', seconds: 5, level: 40 });
    const broken = penalized.find((line) => line.node === 'broken');
    expect(broken).toMatchObject({ seconds: 5 });
    expect(typeof broken!.reason).toBe('string');
    expect(broken!.reason).not.toBe('');
  });

  it('logs a node crossing its spillover threshold', async () => {
    // broken: monthly_limit 1 ⇒ threshold 0; one booked credit is past it (checked each flush).
    const line = await p.waitFor(/quota threshold crossed/);
    expect(JSON.parse(line)).toMatchObject({ node: 'broken', used: 1, threshold: 0 });
  });

  it('exports quota gauges equal to what `cascade quota show` reports', async () => {
    const show = await runCli(['quota', 'show', '--config', temp.path('config.toml'), '--json'], {
      cwd: temp.dir,
      env: { FAKE_API_KEY: API_KEY },
    });
    expect(show.code, show.stderr).toBe(0);
    seen.push(show.stdout, show.stderr);
    const report = JSON.parse(show.stdout) as {
      source: string;
      nodes: Array<{ name: string; used: number; threshold: number | null }>;
    };
    expect(report.source).toBe('server');
    const metrics = parseExposition(await get('/metrics'));
    expect(report.nodes.map((node) => node.used)).toEqual([3, 2, 1]);
    for (const node of report.nodes) {
      expect(valueOf(metrics, 'rpc_node_quota_used', { node: node.name })).toBe(node.used);
      expect(valueOf(metrics, 'rpc_node_quota_threshold', { node: node.name })).toBe(
        node.threshold ?? Infinity,
      );
    }
    await get('/health');
  });

  it('logs a reload with what changed, and the removed node leaves /metrics', async () => {
    writeFileSync(temp.path('config.toml'), configFor([blocks.primary!, blocks.flaky!]));
    p.child.kill('SIGHUP');
    const line = JSON.parse(await p.waitFor(/config reloaded/)) as LogLine;
    expect(line).toMatchObject({ added: [], removed: ['broken'], changed: [] });
    expect(line.msg).toBe('config reloaded: +0 -1 ~0');
    const metrics = parseExposition(await get('/metrics'));
    expect(samplesOf(metrics, 'rpc_upstream_attempts_total', { node: 'broken' })).toEqual([]);
    expect(samplesOf(metrics, 'rpc_upstream_attempts_total', { node: 'primary' })).toHaveLength(7);
  });

  it('stops on SIGTERM with a shutdown summary of per-node usage', async () => {
    exitCode = await p.stop('SIGTERM');
    expect(exitCode).toBe(0);
    expect(linesWith(p, /shutting down/)[0]).toMatchObject({ signal: 'SIGTERM' });
    const [stopped] = linesWith(p, 'cascade stopped');
    expect(stopped).toMatchObject({ usage: { primary: 3, flaky: 2 } });
  });

  it('never shows the API key: not in logs, /health, /metrics, error bodies or quota show', () => {
    expect(seen.length).toBeGreaterThanOrEqual(8);
    expect(p.output().length).toBeGreaterThan(0);
    for (const text of [p.output(), ...seen]) expect(text).not.toContain(API_KEY);
    expect(p.output()).not.toContain(API_KEY.slice(8));
  });
});
