/**
 * An answer that breaks: before any byte reached the client it is retried (or 502), never a
 * 200 cut short; after, the response ends where it broke, and the break is counted and charged
 * to the node. A client that leaves is nobody's failure.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** An upstream that sends `bytes` of a result-first answer promised longer, then resets. */
function breakingAfter(bytes: number): Promise<string> {
  return startUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      const head = '{"jsonrpc":"2.0","id":1,"result":"';
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(10 * 1024 * 1024),
      });
      res.write(head + 'x'.repeat(bytes - head.length), () => res.socket?.destroy());
    });
  });
}

/** POSTs through the proxy; the status, the bytes received, and whether the body ended cleanly. */
function post(url: string): Promise<{ status: number; received: number; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST' }, (res) => {
      let received = 0;
      res.on('data', (chunk: Buffer) => (received += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode!, received, complete: res.complete }));
      res.on('error', () => resolve({ status: res.statusCode!, received, complete: false }));
      res.on('aborted', () => resolve({ status: res.statusCode!, received, complete: false }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(rpc('getProgramAccounts')));
  });
}

function breaksOf(text: string, node: string): number {
  const match = new RegExp(`cascade_upstream_stream_breaks_total\\{node="${node}"\\} (\\d+)`).exec(
    text,
  );
  return match ? Number(match[1]) : NaN;
}

describe('an answer that breaks', () => {
  it('before any byte reached the client: the next node answers in full', async () => {
    const h = (harness = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]));
    pointAt(h, 'a', await breakingAfter(20 * 1024));
    const answer = await h.post(rpc('getSlot', 1));
    expect(answer.status).toBe(200);
    expect((answer.json as { result?: unknown }).result).toBeDefined();
    expect(h.mocks.b!.stats().requests).toBe(1);
    const states = (await h.health()).nodes.map((n) => n.status);
    expect(states).toEqual(['down', 'up']);
  });

  it('with no node left: 502, never a 200 cut short', async () => {
    const h = (harness = await startHarness([{ name: 'a' }]));
    pointAt(h, 'a', await breakingAfter(20 * 1024));
    const answer = await post(h.url);
    expect(answer.status).toBe(502);
    expect(answer.complete).toBe(true);
  });

  it('after the client had bytes: cut where it broke, counted, the node penalized', async () => {
    const h = (harness = await startHarness([{ name: 'a' }, { name: 'b', tier: 1 }]));
    pointAt(h, 'a', await breakingAfter(300 * 1024));
    const answer = await post(h.url);
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(false);
    expect(answer.received).toBeGreaterThan(64 * 1024);
    await expect.poll(async () => breaksOf(await h.metrics(), 'a')).toBe(1);
    expect(breaksOf(await h.metrics(), 'b')).toBe(0);
    expect((await h.health()).nodes[0]!.status).toBe('down');
    expect(h.server.topology.node('a')!.permits.inFlight).toBe(0);
  });

  it('a client that leaves mid-stream is nobody’s failure', async () => {
    // The proxy's clock stands still: however slowly a busy machine builds the 8 MB answer, no
    // attempt deadline passes, so only the client's leaving can end the stream.
    const h = (harness = await startHarness(
      [{ name: 'a', mock: { responseBytes: 8 * 1024 * 1024 } }],
      { clock: new ManualClock() },
    ));
    let status = 0;
    await new Promise<void>((resolve) => {
      const req = httpRequest(h.url, { method: 'POST' }, (res) => {
        status = res.statusCode!;
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end(JSON.stringify(rpc('getProgramAccounts', 1, ['11111111111111111111111111111111'])));
    });
    expect(status).toBe(200);
    const node = h.server.topology.node('a')!;
    await expect.poll(() => node.permits.inFlight).toBe(0);
    expect(breaksOf(await h.metrics(), 'a')).toBe(0);
    expect((await h.health()).nodes[0]!.status).not.toBe('down');
  });
});
