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
import { startHarness, type Harness } from '../support/proxy-harness.js';

const UNAVAILABLE = browserUnavailable();
if (UNAVAILABLE) console.warn(`browser CORS tests skipped: ${UNAVAILABLE}`);

let browser: Browser | undefined;
let harness: Harness | undefined;
const pages: Server[] = [];

beforeAll(async () => {
  if (!UNAVAILABLE) browser = await launchBrowser();
}, BROWSER_TIMEOUT_MS + 30_000);
afterAll(closeBrowsers);
afterEach(async () => {
  await harness?.close();
  harness = undefined;
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
      harness = await startHarness([{ name: 'n' }], { server: { corsOrigins: [origin] } });
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
        server: { corsOrigins: ['*'] },
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
      harness = await startHarness([{ name: 'n' }], { server: { corsOrigins: [allowed] } });
      const page = await openPage(other);
      const result = await callFromPage(page, harness.url, 'getSlot');
      expect(result).toEqual({ ok: false, error: 'TypeError: Failed to fetch' });
      expect(harness.mocks.n!.stats().requests).toBe(0);
    });
  },
);
