/**
 * The WebSocket side on a public endpoint: browsers send `Origin` and apply no CORS to
 * sockets, so the upgrade itself follows `cors_origins`; an open socket is not an idle HTTP
 * connection, so the keep-alive timeout does not end it.
 */
import { describe, expect, it } from 'vitest';
import type { WsTestClient } from '../support/ws-client.js';
import { useWsHarness } from '../support/ws-harness.js';

const ws = useWsHarness();

function open(origin?: string): Promise<WsTestClient> {
  return ws.open(undefined, origin === undefined ? {} : { origin });
}

describe('browser origins', () => {
  it('takes pages of a cors_origins origin and refuses others with 403 (counted)', async () => {
    await ws.start([{ name: 'a' }], {
      server: { corsOrigins: ['https://app.example'] },
    });
    const allowed = await open('https://app.example');
    expect(await allowed.call('getHealth')).toMatchObject({ result: 'ok' });
    await expect(open('https://evil.example')).rejects.toThrow('HTTP 403');
    // Node clients (web3.js, viem, ethers) send no Origin.
    expect(await (await open()).call('getHealth')).toMatchObject({ result: 'ok' });
    expect(await ws.harness.metrics()).toMatch(
      /cascade_ws_rejected_upgrades_total\{reason="origin"\} 1/,
    );
  });

  it('with no cors_origins takes only same-origin pages and clients without an Origin', async () => {
    await ws.start([{ name: 'a' }]);
    await expect(open('https://app.example')).rejects.toThrow('HTTP 403');
    const host = new URL(ws.harness.url).host;
    expect(await (await open(`http://${host}`)).call('getHealth')).toMatchObject({
      result: 'ok',
    });
  });

  it('with cors_origins = "*" takes any page', async () => {
    await ws.start([{ name: 'a' }], { server: { corsOrigins: ['*'] } });
    expect(await (await open('https://any.example')).call('getHealth')).toMatchObject({
      result: 'ok',
    });
  });
});

describe('keep-alive', () => {
  it('keeps a socket open past keep_alive_timeout_ms (it is not an idle HTTP connection)', async () => {
    await ws.start([{ name: 'a' }], { server: { keepAliveTimeoutMs: 1000 } });
    const client = await open();
    let closed = false;
    void client.closed.then(() => (closed = true));
    // Waits out the timeout (plus Node's check interval); asserts a state, not a duration.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(closed).toBe(false);
    expect(await client.call('getHealth')).toMatchObject({ result: 'ok' });
  });
});
