import { afterEach, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { ManualClock } from '../../src/core/clock.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';
import { closeUpstreams, pointAt, startHeldUpstream } from '../support/upstreams.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await closeUpstreams();
});

/** Resolves once `check` holds, polling on the event loop (no wall-clock assertion). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('graceful shutdown', () => {
  it('lets a request in flight finish before closing, and accepts no new ones', async () => {
    // The answer is held until the test has seen the listener refuse: "in flight" on cue, and
    // the standing clock never times the attempt out.
    harness = await startHarness([{ name: 'slow' }], { clock: new ManualClock(1000) });
    const { server, url } = harness;
    const slow = await startHeldUpstream();
    pointAt(harness, 'slow', slow.url);
    const inFlight = harness.post(rpc('getSlot', 'late'));
    await until(() => slow.held === 1);

    let closed = false;
    const closing = server.close(5_000).then(() => {
      closed = true;
    });
    // The listener stops accepting at once: a new connection is refused.
    await expect(
      fetch(url, { method: 'POST', body: JSON.stringify(rpc('getSlot')) }),
    ).rejects.toThrow();
    expect(closed).toBe(false);

    slow.release();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ id: 'late', result: expect.anything() });
    await closing;
    expect(closed).toBe(true);
  });

  it('tells the client of an answer sent while draining to close the connection', async () => {
    harness = await startHarness([{ name: 'slow' }], { clock: new ManualClock(1000) });
    const { server, url } = harness;
    const slow = await startHeldUpstream();
    pointAt(harness, 'slow', slow.url);
    const answered = new Promise<{ status: number; connection: string | undefined }>(
      (resolve, reject) => {
        const req = httpRequest(
          url,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }),
            );
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(rpc('getSlot')));
      },
    );
    await until(() => slow.held === 1);
    const closing = server.close(5_000);
    slow.release();
    expect(await answered).toEqual({ status: 200, connection: 'close' });
    await closing;
  });

  it('closes the connections of requests still running when the drain time is up', async () => {
    harness = await startHarness([{ name: 'stuck', mock: { fault: { kind: 'stall' } } }], {
      server: { requestTimeoutMs: 60_000, attemptTimeoutMs: 59_000 },
    });
    const { mocks, server } = harness;
    const inFlight = harness.post(rpc('getSlot')).then(
      () => 'answered',
      () => 'connection closed',
    );
    await until(() => mocks.stuck!.stats().inFlight === 1);
    // Resolves although the upstream attempt would run for another minute: it is aborted.
    await server.close(50);
    expect(await inFlight).toBe('connection closed');
    await until(() => mocks.stuck!.stats().inFlight === 0);
  });
});
