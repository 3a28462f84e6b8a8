/**
 * The status page's client-key rows in a real browser (issue 27): a key's traffic and budget
 * bar appear at the page's next poll, named by the key — the secret is nowhere on the page.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keyHash } from '../../src/core/config/keys-section.js';
import { REPO_ROOT, assertBuilt } from '../support/cli-process.js';
import {
  BROWSER_TIMEOUT_MS,
  browserUnavailable,
  closeBrowsers,
  launchBrowser,
  openContext,
} from '../support/browser.js';
import { startDemo, type Demo } from '../support/demo-server.js';

const UNAVAILABLE = browserUnavailable();
const KEY = 'ck_status_0123456789abcdefghijklmno';
let browser: Browser | undefined;
let demo: Demo | undefined;

beforeAll(async () => {
  assertBuilt();
  if (!UNAVAILABLE) browser = await launchBrowser();
}, BROWSER_TIMEOUT_MS);
afterAll(() => closeBrowsers());
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
});

describe.skipIf(UNAVAILABLE !== undefined)(
  `client keys on the status page${UNAVAILABLE ? ` (skipped: ${UNAVAILABLE})` : ''}`,
  { timeout: 2 * BROWSER_TIMEOUT_MS },
  () => {
    it("shows each key's calls and its budget bar, never its secret", async () => {
      const toml = readFileSync(
        path.join(REPO_ROOT, 'config/balancer_config/mock_nodes.toml'),
        'utf8',
      ).replace(/"config\/provider_config\//g, `"${REPO_ROOT}/config/provider_config/`);
      const keys = `\n[[keys]]\nname = "web"\nkey_sha256 = "${keyHash(KEY)}"\nmonthly_credits = 1000\n`;
      demo = await startDemo(['--config', 'demo.toml'], { 'demo.toml': toml + keys });
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${demo.url}/${KEY}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}',
        });
        expect(response.status).toBe(200);
      }
      const context = await openContext(browser!, {});
      const page = await context.newPage();
      await page.goto(`${demo.admin}/status`);
      const row = page.locator('#keys tbody tr[data-key="web"]');
      await expect.poll(() => row.count()).toBe(1);
      const cells = await row.locator('td').allTextContents();
      expect(cells[0]).toBe('web');
      expect(cells[1]).toBe('3');
      expect(cells[4]).toMatch(/ of 1,000$/);
      expect(await page.locator('#keys .quota .used').count()).toBe(1);
      expect(await page.content()).not.toContain(KEY);
      await context.close();
    });
  },
);
