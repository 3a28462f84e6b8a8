/**
 * The access log's `client`: the address of whoever sent the request, read through
 * X-Forwarded-For only when the connection comes from a configured trusted proxy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function clientLogged(trustedProxies: readonly string[], forwardedFor: string) {
  const h = (harness = await startHarness([{ name: 'n' }], {
    server: { trustedProxies },
    accessLog: true,
  }));
  const response = await fetch(h.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
    body: JSON.stringify(rpc('getSlot')),
  });
  expect(response.status).toBe(200);
  await expect.poll(() => h.logs.some((line) => line.includes('"msg":"request"'))).toBe(true);
  const line = h.logs.find((l) => l.includes('"msg":"request"'))!;
  return (JSON.parse(line) as { client: string }).client;
}

describe('the access log’s client address', () => {
  it('comes from X-Forwarded-For behind a trusted proxy', async () => {
    expect(await clientLogged(['127.0.0.1'], '203.0.113.9, 198.51.100.7')).toBe('198.51.100.7');
  });

  it('skips every trusted hop', async () => {
    expect(await clientLogged(['127.0.0.0/8', '10.0.0.0/8'], '198.51.100.7, 10.0.0.2')).toBe(
      '198.51.100.7',
    );
  });

  it('is the peer when the peer is not trusted (a client cannot spoof it)', async () => {
    expect(await clientLogged([], '198.51.100.7')).toBe('127.0.0.1');
    await harness?.close();
    harness = undefined;
    expect(await clientLogged(['10.0.0.0/8'], '198.51.100.7')).toBe('127.0.0.1');
  });
});
