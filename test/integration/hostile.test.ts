import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { pino } from 'pino';
import { ManualClock } from '../../src/core/clock.js';
import { startAdminServer, type AdminServer } from '../../src/core/http/admin-server.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
let admin: AdminServer | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await admin?.close();
  admin = undefined;
  await closeUpstreams();
});

describe('hostile and unlucky requests', () => {
  it('answers a batch element nested too deep to re-serialise with -32600, leaking no permit', async () => {
    harness = await startHarness([{ name: 'n', maxConcurrent: 2 }]);
    const deep = `{"jsonrpc":"2.0","id":1,"method":"getBalance","params":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const body = `[${deep},${JSON.stringify(rpc('getSlot', 2))}]`;
    for (let i = 0; i < 3; i++) {
      const response = await harness.post(body);
      expect(response.status).toBe(200);
      const answers = response.json as Array<{
        id: number;
        error?: { code: number };
        result?: unknown;
      }>;
      expect(answers[0]).toMatchObject({ id: 1, error: { code: -32600 } });
      expect(answers[1]!.result).toBeDefined();
    }
    expect(harness.server.topology.node('n')!.permits.inFlight).toBe(0);
  });

  it('frees the permit at once when the client left before a streamed answer arrived', async () => {
    let received!: () => void;
    const arrived = new Promise<void>((resolve) => (received = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const url = await startUpstream((req, res) => {
      req.resume();
      received();
      // The answer leaves only once the client is gone.
      void answered.then(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"jsonrpc":"2.0","id":1,"result":"${'x'.repeat(300 * 1024)}"}`);
      });
    });
    harness = await startHarness([{ name: 'n', maxConcurrent: 1 }], {
      clock: new ManualClock(1000),
    });
    pointAt(harness, 'n', url);
    const req = httpRequest(harness.url, { method: 'POST' });
    req.on('error', () => undefined);
    req.end(JSON.stringify(rpc('getProgramAccounts')));
    await arrived;
    const gone = new Promise((resolve) => req.once('close', resolve));
    req.destroy();
    await gone;
    answer();
    const node = harness.server.topology.node('n')!;
    // Held, the permit would wait for a reader for CLIENT_STALL_MS (60 s): far past the poll.
    await expect.poll(() => node.permits.inFlight).toBe(0);
  });

  it('counts a batch of only invalid elements as bad_request, not bad_gateway', async () => {
    harness = await startHarness([{ name: 'n' }]);
    await harness.post('[1, 2]');
    const text = await harness.metrics();
    expect(text).toMatch(/rpc_requests_total\{outcome="bad_request"\} 1/);
    expect(text).toMatch(/rpc_requests_total\{outcome="bad_gateway"\} 0/);
  });

  it('never dials a node a reload removed while the request was walking the old table', async () => {
    harness = await startHarness(
      [
        { name: 'slow-fail', tier: 0 },
        { name: 'removed', tier: 1 },
        { name: 'kept', tier: 2 },
      ],
      { clock: new ManualClock(1000) },
    );
    // slow-fail answers -32005 (node behind: retry elsewhere), but only when the test says.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let arrived = false;
    pointAt(
      harness,
      'slow-fail',
      await startUpstream((req, res) => {
        req.resume();
        arrived = true;
        void answered.then(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"node is behind"}}');
        });
      }),
    );
    const full = harness.server.config;
    const inFlight = harness.post(rpc('getSlot'));
    await expect.poll(() => arrived).toBe(true);
    harness.server.reload({ ...full, nodes: full.nodes.filter((n) => n.name !== 'removed') });
    answer();
    expect((await inFlight).status).toBe(200);
    expect(harness.mocks.removed!.stats().requests).toBe(0);
    // Not even booked: the request skipped the retired node instead of dialing its closed pool.
    expect(harness.ledger.counter('removed').used).toBe(0);
    expect(harness.mocks.kept!.stats().requests).toBe(1);
  });

  it('keeps the admin listener (and the proxy) alive on a body of null', async () => {
    admin = await startAdminServer(
      0,
      { report: () => [], nodeNames: () => ['a'], reset: () => Promise.resolve([]) },
      pino({ level: 'silent' }),
    );
    const url = `http://127.0.0.1:${admin.port}/admin/quota`;
    for (const body of ['null', '[]', '"x"', '{"nodes":[1]}']) {
      const response = await fetch(`${url}/reset`, { method: 'POST', body });
      expect(response.status).toBe(400);
      await response.text();
    }
    expect((await fetch(url)).status).toBe(200);
  });
});
