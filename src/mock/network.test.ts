import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockNode, type MockNode } from './index.js';

let node: MockNode | undefined;
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
  await node?.close();
  node = undefined;
});

const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';

function newAgent(cert?: string): Agent {
  const agent = new Agent({ connections: 1, ...(cert ? { connect: { ca: cert } } : {}) });
  agents.push(agent);
  return agent;
}

/** Milliseconds one POST takes through `agent`. */
async function timed(target: MockNode, agent: Agent): Promise<number> {
  const started = performance.now();
  const res = await request(target.url, { method: 'POST', body: BODY, dispatcher: agent });
  expect(await res.body.text()).toBe('{"jsonrpc":"2.0","result":"ok","id":1}');
  return performance.now() - started;
}

/** Best of three: a fresh connection each time vs one reused keep-alive connection. */
async function freshVersusReused(target: MockNode, cert?: string) {
  const fresh: number[] = [];
  for (let i = 0; i < 3; i++) fresh.push(await timed(target, newAgent(cert)));
  const pooled = newAgent(cert);
  await timed(target, pooled);
  const reused: number[] = [];
  for (let i = 0; i < 3; i++) reused.push(await timed(target, pooled));
  return { fresh: Math.min(...fresh), reused: Math.min(...reused) };
}

describe('TLS', () => {
  it('serves https with a generated certificate a client can trust', async () => {
    node = await startMockNode({ name: 'tls', tls: true });
    expect(node.url).toBe(`https://127.0.0.1:${node.port}`);
    expect(node.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(await timed(node, newAgent(node.cert))).toBeGreaterThan(0);
  });

  it('ends a stalled https request on close()', async () => {
    node = await startMockNode({ name: 'tls', tls: true, fault: { kind: 'stall' } });
    const agent = newAgent(node.cert);
    const pending = request(node.url, { method: 'POST', body: BODY, dispatcher: agent }).then(
      () => 'answered',
      () => 'failed',
    );
    while (node.stats().inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await node.close();
    expect(await pending).toBe('failed');
    expect(node.stats().inFlight).toBe(0);
  });

  it('is refused by a client that does not trust the certificate', async () => {
    node = await startMockNode({ name: 'tls', tls: true });
    await expect(
      request(node.url, { method: 'POST', body: BODY, dispatcher: newAgent() }),
    ).rejects.toThrow(/self[- ]signed|certificate/i);
  });
});

describe('simulated round trip (rttMs)', () => {
  const RTT = 50;
  /** Timers never fire early, but allow a little clock granularity. */
  const SLACK = 3;

  it('costs one RTT per request on a reused connection and two on a fresh one', async () => {
    node = await startMockNode({ name: 'rtt', rttMs: RTT });
    const { fresh, reused } = await freshVersusReused(node);
    expect(reused).toBeGreaterThanOrEqual(RTT - SLACK);
    expect(fresh).toBeGreaterThanOrEqual(2 * RTT - SLACK);
    expect(fresh - reused).toBeGreaterThanOrEqual(RTT * 0.8);
  });

  it('adds the TLS handshake round trip on a fresh https connection', async () => {
    node = await startMockNode({ name: 'rtt-tls', rttMs: RTT, tls: true });
    const { fresh, reused } = await freshVersusReused(node, node.cert);
    expect(reused).toBeGreaterThanOrEqual(RTT - SLACK);
    expect(fresh).toBeGreaterThanOrEqual(3 * RTT - SLACK);
    expect(fresh - reused).toBeGreaterThanOrEqual(2 * RTT * 0.8);
  });

  it('closes held and wrapped connections on close()', async () => {
    node = await startMockNode({ name: 'rtt', rttMs: RTT, fault: { kind: 'stall' } });
    const pending = request(node.url, { method: 'POST', body: BODY, dispatcher: newAgent() }).then(
      () => 'answered',
      () => 'failed',
    );
    while (node.stats().inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await node.close();
    expect(await pending).toBe('failed');
    expect(node.stats()).toMatchObject({ inFlight: 0, connections: 1 });
  });
});
