import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { request as httpRequest, type ServerResponse } from 'node:http';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** An upstream that answers through `handler` once the request body is in; returns its URL. */
function upstream(handler: (res: ServerResponse) => void): Promise<string> {
  return startUpstream((req, res) => {
    req.resume();
    req.on('end', () => handler(res));
  });
}

/** Streams a POST through the proxy, calling onFirstByte when the first chunk arrives. */
function streamThrough(
  url: string,
  body: string,
  onFirstByte: () => void,
): Promise<{ status: number; data: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        let first = true;
        res.on('data', (chunk: Buffer) => {
          if (first) onFirstByte();
          first = false;
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, data: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const HEAD = `{"jsonrpc":"2.0","id":1,"result":"${'a'.repeat(200 * 1024)}`;

describe('large answers', () => {
  it('passes a 20 MB getProgramAccounts answer through byte for byte', async () => {
    harness = await startHarness([{ name: 'big', mock: { responseBytes: 20 * 1024 * 1024 } }]);
    const body = JSON.stringify(rpc('getProgramAccounts', 1, ['11111111111111111111111111111111']));
    const direct = await streamThrough(harness.mocks.big!.url, body, () => {});
    const proxied = await streamThrough(harness.url, body, () => {});
    expect(proxied.status).toBe(200);
    expect(proxied.data.length).toBeGreaterThanOrEqual(20 * 1024 * 1024);
    expect(sha(proxied.data)).toBe(sha(direct.data));
  });

  it('sends the first bytes to the client before the upstream has sent the last', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let upstreamFinished = false;
    const url = await upstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(HEAD);
      // The tail is held back until the client has seen the head: a proxy that buffered the
      // answer would never send a byte, and the test would time out.
      void released.then(() => {
        upstreamFinished = true;
        res.end('"}');
      });
    });
    harness = await startHarness([{ name: 'n' }], { clock: new ManualClock(1000) });
    pointAt(harness, 'n', url);
    let finishedAtFirstByte: boolean | undefined;
    const result = await streamThrough(
      harness.url,
      JSON.stringify(rpc('getProgramAccounts')),
      () => {
        finishedAtFirstByte = upstreamFinished;
        release();
      },
    );
    expect(result.data.toString()).toBe(`${HEAD}"}`);
    expect(finishedAtFirstByte).toBe(false);
  });

  it('aborts the upstream request and frees the permit when the client disconnects mid-stream', async () => {
    let upstreamClosed = false;
    const url = await upstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(HEAD);
      // Never ends on its own, and never falls silent long enough (STREAM_IDLE_MS) to be cut
      // off as stalled: only the client's leaving can close it.
      const trickle = setInterval(() => res.write('a'), 100);
      res.on('close', () => {
        clearInterval(trickle);
        upstreamClosed = true;
      });
    });
    harness = await startHarness([{ name: 'n', maxConcurrent: 1 }], {
      clock: new ManualClock(1000),
    });
    pointAt(harness, 'n', url);
    await new Promise<void>((resolve) => {
      const req = httpRequest(harness!.url, { method: 'POST' }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => undefined);
      req.end(JSON.stringify(rpc('getProgramAccounts')));
    });
    await expect.poll(() => upstreamClosed).toBe(true);
    expect(harness.server.topology.node('n')!.permits.inFlight).toBe(0);
    // The single permit is free: a later request is admitted (and served by a healthy answer).
    pointAt(harness, 'n', harness.mocks.n!.url);
    expect((await harness.post(rpc('getSlot'))).status).toBe(200);
  });

  it('buffers and classifies a large answer whose first member is an error', async () => {
    const url = await upstream((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"${'x'.repeat(100 * 1024)}"}}`,
      );
    });
    harness = await startHarness([
      { name: 'erring', tier: 0 },
      { name: 'healthy', tier: 1 },
    ]);
    pointAt(harness, 'erring', url);
    const response = await harness.post(rpc('getSlot'));
    expect(response.status).toBe(200);
    expect(harness.mocks.healthy!.stats().requests).toBe(1);
    expect(await harness.metrics()).toMatch(
      /rpc_upstream_attempts_total\{node="erring",outcome="retryable_rpc_error"\} 1/,
    );
  });
});
