import { afterEach, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Config } from '../../src/core/config/types.js';
import { ProxyServer } from '../../src/core/http/server.js';
import { NOOP_METRICS, type ProxyMetrics } from '../../src/core/metrics.js';
import { LocalUsageLedger } from '../../src/core/quota/usage-ledger.js';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { TEST_REGISTRY, nodeConfig, priceList } from '../support/node-config.js';
import { rpc, serverConfig } from '../support/proxy-harness.js';

let server: ProxyServer | undefined;
let mocks: MockNode[] = [];
afterEach(async () => {
  await server?.close(0);
  server = undefined;
  await Promise.all(mocks.map((mock) => mock.close()));
  mocks = [];
});

/** Metrics whose per-attempt recorder throws: a stand-in for a bug inside the request path. */
function brokenAttemptMetrics(requests: number[]): ProxyMetrics {
  return {
    ...NOOP_METRICS,
    request: (outcome) => void requests.push(outcome),
    forNode: () => ({
      attempt: () => {
        throw new Error('recorder exploded');
      },
      skip: () => {},
      streamBroken: () => {},
    }),
  };
}

describe('a bug inside the request path', () => {
  it('answers 500, logs it, counts the request once, and keeps serving', async () => {
    mocks = await startMockNodes([{ name: 'n' }]);
    const url = mocks[0]!.url;
    const config: Config = {
      path: '/test/config.toml',
      server: serverConfig({ enableMetrics: false }),
      nodes: [nodeConfig({ name: 'n', url, redactedUrl: url, pricing: priceList({}, 1) })],
    };
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    const requests: number[] = [];
    server = await ProxyServer.start({
      config,
      registry: TEST_REGISTRY,
      logger: pino({ level: 'info' }, sink),
      usage: new LocalUsageLedger(),
      version: '0.0.0-test',
      metrics: brokenAttemptMetrics(requests),
    });
    for (const id of [1, 2]) {
      const response = await fetch(`http://127.0.0.1:${server.port}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rpc('getSlot', id)),
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ error: { code: -32603 } });
    }
    expect(logs.filter((line) => line.includes('request failed unexpectedly'))).toHaveLength(2);
    expect(logs.some((line) => line.includes('recorder exploded'))).toBe(true);
    expect(server.requestCounts()).toMatchObject({ bad_gateway: 2, forwarded: 0 });
    expect(requests).toHaveLength(2);
  });
});
