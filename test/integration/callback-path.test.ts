import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import {
  closeUpstreams,
  pointAt,
  startHeldUpstream,
  startUpstream as upstream,
} from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

function attempts(text: string, node: string, outcome: string): number {
  const match = new RegExp(
    `rpc_upstream_attempts_total\\{node="${node}",outcome="${outcome}"\\} (\\d+)`,
  ).exec(text);
  return match ? Number(match[1]) : 0;
}

describe('single-request callback path', () => {
  it('never dials a node a reload removed while the request waited for its permit', async () => {
    harness = await startHarness(
      [
        { name: 'busy', tier: 0, maxConcurrent: 1 },
        // Saturated from the start (no permit at all) so the second request waits on `busy`.
        { name: 'spare', tier: 1, maxConcurrent: 0 },
      ],
      { clock: new ManualClock(1000) },
    );
    const h = harness;
    const busy = await startHeldUpstream();
    pointAt(h, 'busy', busy.url);
    const first = h.post(rpc('getSlot', 1));
    await expect.poll(() => busy.held).toBe(1);
    const second = h.post(rpc('getSlot', 2));
    // Wait until the second request is parked on `busy`'s permit.
    await expect.poll(async () => /rpc_sleep_queue_size 1\b/.test(await h.metrics())).toBe(true);
    const full = h.server.config;
    h.server.reload({
      ...full,
      nodes: full.nodes
        .filter((n) => n.name !== 'busy')
        .map((n) => (n.name === 'spare' ? { ...n, maxConcurrent: 4 } : n)),
    });
    busy.release(); // the first request ends and hands busy's permit to the second
    expect((await first).status).toBe(200);
    const answer = await second;
    expect(answer.status).toBe(200);
    expect(busy.received).toBe(1);
    expect(h.mocks.spare!.stats().requests).toBe(1);
    // The second request must not be booked on, or record a failure against, the removed node.
    expect(h.ledger.counter('busy').used).toBe(1);
    expect(attempts(await h.metrics(), 'busy', 'transport_error')).toBe(0);
  });

  it('penalizes a node that used its whole attempt deadline when the budget had room for it', async () => {
    // 597 of a 600 ms budget leaves the attempt its full deadline, so timing out is the node's
    // fault (penalty, fail over). The proxy's clock moves only when the test says: however
    // slow the machine, the attempt starts at the request's first millisecond.
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        { name: 'stalled', tier: 0, mock: { fault: { kind: 'stall' } } },
        { name: 'healthy', tier: 1 },
      ],
      { server: { requestTimeoutMs: 600, attemptTimeoutMs: 597 }, clock },
    );
    const h = harness;
    const first = h.post(rpc('getSlot', 1));
    await expect.poll(() => h.mocks.stalled!.stats().inFlight).toBe(1);
    clock.advance(597);
    expect((await first).status).toBe(200);
    expect(attempts(await h.metrics(), 'stalled', 'transport_error')).toBe(1);
    expect(h.mocks.healthy!.stats().requests).toBe(1);
    expect((await h.health()).nodes.find((n) => n.name === 'stalled')!.status).toBe('down');
  });

  it('abandons, without penalty, an attempt the budget cut short', async () => {
    const clock = new ManualClock(1000);
    harness = await startHarness(
      [
        { name: 'first', tier: 0, mock: { fault: { kind: 'stall' } } },
        { name: 'second', tier: 1, mock: { fault: { kind: 'stall' } } },
      ],
      { server: { requestTimeoutMs: 600, attemptTimeoutMs: 500 }, clock },
    );
    const h = harness;
    const answer = h.post(rpc('getSlot', 1));
    await expect.poll(() => h.mocks.first!.stats().inFlight).toBe(1);
    clock.advance(500); // `first` used its whole deadline: its fault
    await expect.poll(() => h.mocks.second!.stats().inFlight).toBe(1);
    clock.advance(100); // `second` had only the 100 ms left of the budget: not its fault
    expect((await answer).status).toBe(504);
    const text = await h.metrics();
    expect(attempts(text, 'first', 'transport_error')).toBe(1);
    expect(attempts(text, 'second', 'transport_error')).toBe(0);
    const states = Object.fromEntries((await h.health()).nodes.map((n) => [n.name, n.status]));
    expect(states).toEqual({ first: 'down', second: 'unknown' });
  });

  it('relays a streamed answer to a client that stops reading for a while, then frees the permit', async () => {
    const size = 8 * 1024 * 1024;
    const url = await upstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      const head = '{"jsonrpc":"2.0","id":1,"result":"';
      res.write(head);
      let left = size;
      const pump = (): void => {
        while (left > 0) {
          const n = Math.min(left, 64 * 1024);
          left -= n;
          if (!res.write('x'.repeat(n))) return void res.once('drain', pump);
        }
        res.end('"}');
      };
      pump();
    });
    harness = await startHarness([{ name: 'n', maxConcurrent: 1 }]);
    pointAt(harness, 'n', url);
    const node = harness.server.topology.node('n')!;
    const received = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(harness!.url, { method: 'POST' }, (res) => {
        let total = 0;
        res.pause();
        setTimeout(() => {
          res.on('data', (c: Buffer) => (total += c.length));
          res.on('end', () => resolve(total));
          res.resume();
        }, 700);
      });
      req.on('error', reject);
      req.end(JSON.stringify(rpc('getProgramAccounts')));
    });
    expect(received).toBe(size + 36);
    await expect.poll(() => node.permits.inFlight).toBe(0);
  });

  it('joins a request and an answer that arrive in several pieces, in order', async () => {
    const pieces = [
      '{"jsonrpc":"2.0","id":7,',
      '"result":{"context":{"slot":5},',
      '"value":"abc"}}',
    ];
    let received = '';
    const url = await upstream((req, res) => {
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (received += chunk));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        // Each piece its own write, a tick apart: the proxy reads them as separate chunks.
        let next = 0;
        const write = (): void => {
          if (next === pieces.length) return void res.end();
          res.write(pieces[next++]);
          setTimeout(write, 15);
        };
        write();
      });
    });
    harness = await startHarness([{ name: 'n' }]);
    pointAt(harness, 'n', url);
    const sent = JSON.stringify(
      rpc('getBalance', 7, ['9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM']),
    );
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(harness!.url, { method: 'POST' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.setHeader('content-type', 'application/json');
      // The request body in three writes, a tick apart (chunked encoding).
      const cut = [0, 10, 30, sent.length];
      let part = 0;
      const send = (): void => {
        if (part === 3) return void req.end();
        req.write(sent.slice(cut[part], cut[part + 1]));
        part++;
        setTimeout(send, 15);
      };
      send();
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(pieces.join(''));
    expect(received).toBe(sent);
  });

  it('skips 103 Early Hints and forwards the final answer with its content type', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"result":42}';
    const url = await upstream((req, res) => {
      req.resume();
      res.writeEarlyHints({ link: '</x>; rel=preload' });
      setTimeout(() => {
        res.writeHead(200, { 'CONTENT-TYPE': 'application/json; charset=utf-8' });
        res.end(body);
      }, 20);
    });
    harness = await startHarness([{ name: 'n' }], { clock: new ManualClock(1000) });
    pointAt(harness, 'n', url);
    const answer = await harness.post(rpc('getSlot'));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(body);
    expect(answer.contentType).toBe('application/json; charset=utf-8');
  });

  it('answers every request when every pool is closed (errors raised inside dispatch)', async () => {
    harness = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]);
    for (const node of harness.server.topology.table.all) await node.transport.close();
    const answers = await Promise.all([1, 2, 3].map((id) => harness!.post(rpc('getSlot', id))));
    expect(answers.map((a) => a.status)).toEqual([502, 502, 502]);
    for (const node of harness.server.topology.table.all) expect(node.permits.inFlight).toBe(0);
    // (closing the pools again in server.close() throws: test artefact, not the bug hunted here)
    await harness.close().catch(() => undefined);
    harness = undefined;
  });
});
