/**
 * A dApp page in a real browser (Debian's Chromium) calls cascade with `fetch` from another
 * origin, as a front-end whose RPC URL points at cascade does: the browser sends its own
 * preflight and headers, and enforces the answer. Skipped, saying why, without Chromium.
 */
import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BROWSER_TIMEOUT_MS,
  browserUnavailable,
  closeBrowsers,
  launchBrowser,
  openContext,
} from '../support/browser.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';
import { startWsHarness, type WsHarness } from '../support/ws-harness.js';

const UNAVAILABLE = browserUnavailable();
/**
 * Deadlines for a proxy running beside a starting browser: Chromium can hold a busy machine's
 * CPU past the shipped 500 ms attempt deadline, and these tests are about CORS, not deadlines.
 */
const UNHURRIED = { requestTimeoutMs: 10_000, attemptTimeoutMs: 5_000 };
if (UNAVAILABLE) console.warn(`browser CORS tests skipped: ${UNAVAILABLE}`);

let browser: Browser | undefined;
let harness: Harness | undefined;
let keyed: WsHarness | undefined;
const pages: Server[] = [];

beforeAll(async () => {
  if (!UNAVAILABLE) browser = await launchBrowser();
}, BROWSER_TIMEOUT_MS + 30_000);
afterAll(closeBrowsers);
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await keyed?.close();
  keyed = undefined;
  for (const server of pages.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Serves a dApp page on its own port (its own origin); resolves with the origin. */
async function servePage(): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>dApp</title><p>dApp</p>');
  });
  pages.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function openPage(origin: string): Promise<Page> {
  const context = await openContext(browser!);
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  return page;
}

/** What the page's fetch to cascade gave: the JSON answer, or the error the browser raised. */
type CallResult = { ok: true; status: number; json: unknown } | { ok: false; error: string };

/** Calls cascade from inside the page, as @solana/web3.js does (its headers included). */
function callFromPage(page: Page, url: string, method: string, params: unknown[] = []) {
  return page.evaluate(
    async ({ url, method, params }): Promise<CallResult> => {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'solana-client': 'js/1.99.0' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        });
        return { ok: true, status: response.status, json: await response.json() };
      } catch (err) {
        return { ok: false, error: String(err) };
      }
    },
    { url, method, params },
  );
}

describe.skipIf(UNAVAILABLE !== undefined)(
  `a page on another origin, in Chromium${UNAVAILABLE ? ` (skipped: ${UNAVAILABLE})` : ''}`,
  { timeout: 2 * BROWSER_TIMEOUT_MS },
  () => {
    it('calls cascade with fetch and gets the answer', async () => {
      const origin = await servePage();
      harness = await startHarness([{ name: 'n' }], {
        server: { ...UNHURRIED, corsOrigins: [origin] },
      });
      const page = await openPage(origin);
      const result = await callFromPage(page, harness.url, 'getSlot');
      expect(result).toEqual({
        ok: true,
        status: 200,
        json: { jsonrpc: '2.0', id: 1, result: expect.any(Number) as unknown },
      });
    });

    it('gets a big answer gzipped and decoded by the browser', async () => {
      const origin = await servePage();
      harness = await startHarness([{ name: 'n', mock: { responseBytes: 300_000 } }], {
        server: { ...UNHURRIED, corsOrigins: ['*'] },
      });
      const page = await openPage(origin);
      const encoding = page
        .waitForResponse((response) => response.url().startsWith(harness!.url))
        .then((response) => response.headers()['content-encoding']);
      const result = await callFromPage(page, harness.url, 'getProgramAccounts', [
        '11111111111111111111111111111111',
      ]);
      expect(await encoding).toBe('gzip');
      expect(result.ok).toBe(true);
      const accounts = (result as { json: { result: unknown[] } }).json.result;
      expect(accounts.length).toBeGreaterThan(100);
    });

    it('is blocked from an origin not in cors_origins, and no node is asked', async () => {
      const allowed = await servePage();
      const other = await servePage();
      harness = await startHarness([{ name: 'n' }], {
        server: { ...UNHURRIED, corsOrigins: [allowed] },
      });
      const page = await openPage(other);
      const result = await callFromPage(page, harness.url, 'getSlot');
      expect(result).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
      expect(harness.mocks.n!.stats().requests).toBe(0);
    });
  },
);

/**
 * A "simple" cross-origin call (text/plain, no custom header): the browser sends it without a
 * preflight, so it reaches cascade, and only the answer's CORS headers decide what the page sees.
 */
function simpleCallFromPage(page: Page, url: string) {
  return page.evaluate(async (url): Promise<CallResult> => {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      });
      return { ok: true, status: response.status, json: await response.json() };
    } catch (err) {
      return { ok: false, error: String(err) };
    }
  }, url);
}

const BROWSER_KEY = 'ck_browser_0123456789abcdefghijklmn';

describe.skipIf(UNAVAILABLE !== undefined)(
  `a browser key in Chromium${UNAVAILABLE ? ` (skipped: ${UNAVAILABLE})` : ''}`,
  { timeout: 2 * BROWSER_TIMEOUT_MS },
  () => {
    async function startKeyed(allowed: string): Promise<string> {
      keyed = await startWsHarness([{ name: 'n' }], {
        keys: keysOf(clientKey('dapp', BROWSER_KEY, { origins: [allowed] })),
        server: { requireKey: true },
      });
      return `${keyed.url}/${BROWSER_KEY}`;
    }

    it('works from a page of an allowed origin, the key in the RPC URL', async () => {
      const allowed = await servePage();
      const url = await startKeyed(allowed);
      const page = await openPage(allowed);
      expect(await callFromPage(page, url, 'getSlot')).toEqual({
        ok: true,
        status: 200,
        json: { jsonrpc: '2.0', id: 1, result: expect.any(Number) as unknown },
      });
      expect(await simpleCallFromPage(page, url)).toMatchObject({ ok: true, status: 200 });
    });

    it('gives a page of another origin nothing it can read, and no node is asked', async () => {
      const allowed = await servePage();
      const other = await servePage();
      const url = await startKeyed(allowed);
      const page = await openPage(other);
      // With a preflight (web3.js' headers): the browser stops at the preflight.
      expect(await callFromPage(page, url, 'getSlot')).toEqual({
        ok: false,
        error: 'TypeError: Failed to fetch',
      });
      // Without one: the call reaches cascade, is refused (403), and the page cannot read it.
      expect(await simpleCallFromPage(page, url)).toEqual({
        ok: false,
        error: 'TypeError: Failed to fetch',
      });
      expect(keyed!.mocks.n!.stats().requests).toBe(0);
      const metrics = await keyed!.metrics();
      expect(metrics).toMatch(/^rpc_key_requests_total\{key="dapp",outcome="origin"\} 1$/m);
    });
  },
);
