import { afterEach, describe, expect, it } from 'vitest';
import { startMockNode, type MockNode } from '../mock/index.js';
import { runNaiveClient } from './naive-client.js';

const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
let node: MockNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

describe('runNaiveClient', () => {
  it('opens a new TLS connection per request and measures the handshake', async () => {
    node = await startMockNode({ name: 'tls', tls: true });
    const run = await runNaiveClient({
      url: node.url,
      body: BODY,
      requests: 6,
      concurrency: 2,
      ca: node.cert,
      timeoutMs: 5000,
    });
    expect(run.samples).toHaveLength(6);
    expect(node.stats().connections).toBe(6);
    for (const sample of run.samples) {
      expect(sample).toMatchObject({ ok: true, status: 200 });
      expect(sample.tlsMs).toBeGreaterThan(0);
      expect(sample.setupMs).toBeGreaterThanOrEqual(sample.tlsMs);
      expect(sample.latencyMs).toBeGreaterThanOrEqual(sample.setupMs);
    }
  });

  it('records a refused connection as an error, not a response', async () => {
    node = await startMockNode({ name: 'gone' });
    const url = node.url;
    await node.close();
    const run = await runNaiveClient({
      url,
      body: BODY,
      requests: 2,
      concurrency: 1,
      timeoutMs: 2000,
    });
    expect(run.samples.map((s) => [s.ok, s.error])).toEqual([
      [false, 'ECONNREFUSED'],
      [false, 'ECONNREFUSED'],
    ]);
  });

  it('counts an HTTP error or a JSON-RPC error as a failure', async () => {
    node = await startMockNode({ name: 'faulty', fault: { kind: 'rpc_error', code: -32005 } });
    const run = await runNaiveClient({
      url: node.url,
      body: BODY,
      requests: 2,
      concurrency: 2,
      timeoutMs: 2000,
    });
    expect(run.samples.every((s) => !s.ok && s.status === 200 && s.error === undefined)).toBe(true);
  });

  it('spaces requests out to the requested rate', async () => {
    node = await startMockNode({ name: 'paced' });
    const run = await runNaiveClient({
      url: node.url,
      body: BODY,
      requests: 5,
      concurrency: 5,
      qps: 50,
      timeoutMs: 2000,
    });
    const starts = run.samples.map((s) => s.startMs).sort((a, b) => a - b);
    expect(starts.at(-1)! - starts[0]!).toBeGreaterThanOrEqual(75); // 4 gaps of 20 ms, some slack
  });
});
