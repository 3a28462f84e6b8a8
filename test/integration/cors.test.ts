/**
 * CORS as a browser sees it, over plain HTTP (test/integration/browser-cors.test.ts drives a
 * real Chromium): preflights answered by cascade itself, answers readable by allowed origins
 * only, and nothing at all when `cors_origins` is empty.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CORS_ALLOWED_HEADERS } from '../../src/core/http/cors.js';
import { rpc, startHarness, type Harness } from '../support/proxy-harness.js';

const APP = 'https://app.example';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function start(corsOrigins: readonly string[]): Promise<Harness> {
  harness = await startHarness([{ name: 'n' }], { server: { corsOrigins } });
  return harness;
}

function preflight(h: Harness, path: string, origin: string, method = 'POST'): Promise<Response> {
  return fetch(`${h.url}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type,solana-client',
    },
  });
}

function call(h: Harness, origin: string | undefined, body: unknown = rpc('getSlot')) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (origin !== undefined) headers.origin = origin;
  return fetch(h.url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('preflight', () => {
  it.each(['/', '/send-request'])(
    'OPTIONS %s is answered 204 without touching a node',
    async (path) => {
      const h = await start([APP]);
      const response = await preflight(h, path, APP);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(APP);
      expect(response.headers.get('access-control-allow-methods')).toBe('POST');
      expect(response.headers.get('access-control-allow-headers')).toBe(CORS_ALLOWED_HEADERS);
      expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(response.headers.get('vary')).toContain('Origin');
      expect(await response.text()).toBe('');
      expect(h.mocks.n!.stats().requests).toBe(0);
    },
  );

  it('/health allows GET', async () => {
    const h = await start([APP]);
    const response = await preflight(h, '/health', APP, 'GET');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-methods')).toBe('GET');
  });

  it('allows the headers web3.js, @solana/kit, viem and ethers send', () => {
    const allowed = CORS_ALLOWED_HEADERS.split(', ');
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'solana-client', 'accept']));
    expect(allowed).toEqual(expect.arrayContaining(['traceparent', 'tracestate', 'x-request-id']));
  });

  it('gives a disallowed origin no CORS headers, so its browser blocks the call', async () => {
    const h = await start([APP]);
    const response = await preflight(h, '/', 'https://evil.example');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-methods')).toBeNull();
    expect(h.mocks.n!.stats().requests).toBe(0);
  });

  it('"*" lets any origin in', async () => {
    const h = await start(['*']);
    const response = await preflight(h, '/', 'http://localhost:5173');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('answers', () => {
  it('carry Access-Control-Allow-Origin and Vary: Origin for an allowed origin', async () => {
    const h = await start([APP, 'https://other.example']);
    const response = await call(h, APP);
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('vary')).toContain('Origin');
    expect(await response.json()).toMatchObject({ result: expect.any(Number) as unknown });
  });

  it('cascade’s own errors too, so the page can read them', async () => {
    const h = await start([APP]);
    const response = await call(h, APP, '{"jsonrpc":');
    expect(response.status).toBe(400);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('/health too', async () => {
    const h = await start(['*']);
    const response = await fetch(`${h.url}/health`, { headers: { origin: APP } });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('say Vary: Origin but allow nothing for a disallowed origin', async () => {
    const h = await start([APP]);
    const response = await call(h, 'https://evil.example');
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('vary')).toContain('Origin');
  });

  it('/metrics is never opened to other origins', async () => {
    const h = await start(['*']);
    const response = await fetch(`${h.url}/metrics`, { headers: { origin: APP } });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('with cors_origins empty (the default)', () => {
  it('OPTIONS gets 405 and answers carry no CORS headers', async () => {
    const h = await start([]);
    const response = await preflight(h, '/', APP);
    expect(response.status).toBe(405);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const answer = await call(h, APP);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(answer.headers.get('vary')).toBeNull();
  });
});
