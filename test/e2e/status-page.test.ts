/**
 * The live status page in a real browser (Debian's Chromium, driven by playwright-core): the
 * demo's six nodes with their states, a cordon showing up at the page's next polls, no request
 * leaving the proxy's origin, and the plain table without JavaScript. The screenshot goes to a
 * temporary folder; with CASCADE_UPDATE_SCREENSHOT=1 it replaces the README's
 * (docs/status-page.png). Skipped, saying why, without Chromium.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, assertBuilt } from '../support/cli-process.js';
import {
  BROWSER_TIMEOUT_MS,
  browserUnavailable,
  closeBrowsers,
  launchBrowser,
  openContext,
} from '../support/browser.js';
import { sendRequests, startDemo, type Demo } from '../support/demo-server.js';

const UNAVAILABLE = browserUnavailable();
if (UNAVAILABLE) console.warn(`status page browser tests skipped: ${UNAVAILABLE}`);

/** The six nodes of mock_nodes.toml (the metered demo below serves them as one chain). */
const MOCK_NODES = ['Helius-1', 'Helius-2', 'Alchemy-1', 'Alchemy-2', 'Triton-1', 'public-mirror'];
/** The demo's nodes: Solana's six, then the EVM chain's two. */
const DEMO_NODES = [
  'Helius-1',
  'Helius-2',
  'Alchemy-1',
  'Alchemy-2',
  'Triton-1',
  'public-mirror',
  'Alchemy-eth',
  'public-eth',
];
/** The README's screenshot is rewritten only on request, so a test run leaves the tree clean. */
const SCREENSHOT =
  process.env.CASCADE_UPDATE_SCREENSHOT === '1'
    ? path.join(REPO_ROOT, 'docs', 'status-page.png')
    : path.join(os.tmpdir(), `cascade-status-page-${process.pid}.png`);

let browser: Browser | undefined;
let demo: Demo | undefined;

beforeAll(async () => {
  assertBuilt();
  if (!UNAVAILABLE) browser = await launchBrowser();
}, BROWSER_TIMEOUT_MS + 30_000);
afterAll(async () => {
  await closeBrowsers();
  if (process.env.CASCADE_UPDATE_SCREENSHOT !== '1') rmSync(SCREENSHOT, { force: true });
});
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
});

/**
 * The demo's config with monthly limits (and quotas.json with some usage), so the page's quota
 * bars and spillover marks have something to show: Helius-1 is past its threshold.
 */
async function startMeteredDemo(): Promise<Demo> {
  const limits = [10_000_000, 10_000_000, 5_000_000, 5_000_000, 0, 0];
  let index = 0;
  const toml = readFileSync(path.join(REPO_ROOT, 'config/balancer_config/mock_nodes.toml'), 'utf8')
    .replace(/monthly_limit = 0/g, () => `monthly_limit = ${limits[index++]}`)
    .replace(/"config\/provider_config\//g, `"${REPO_ROOT}/config/provider_config/`);
  const now = new Date();
  const periodStart = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
  const used = { 'Helius-1': 9_610_000, 'Helius-2': 3_950_000, 'Alchemy-1': 3_400_000 };
  const quotas = Object.fromEntries(
    Object.entries(used).map(([name, credits]) => [
      name,
      { used: credits, period_start: periodStart },
    ]),
  );
  return startDemo(['--config', 'demo.toml'], {
    'demo.toml': toml,
    'quotas.json': JSON.stringify(quotas),
  });
}

/** The state shown in each row, by node (in table order). */
async function states(page: Page): Promise<Record<string, string>> {
  const shown: Record<string, string> = {};
  for (const row of await page.locator('#nodes tbody tr[data-node]').all()) {
    const text = (await row.locator('td.state').textContent()) ?? '';
    shown[(await row.getAttribute('data-node')) ?? ''] =
      /^(up|penalized|cordoned|unknown)/.exec(text.trim())?.[1] ?? text;
  }
  return shown;
}

/** How many answers the page has shown so far. */
async function polls(page: Page): Promise<number> {
  return Number((await page.locator('body').getAttribute('data-polls')) ?? 0);
}

/** Waits until the page has shown at least `n` answers. */
async function pollsReach(page: Page, n: number): Promise<void> {
  // (The page's CSP forbids evaluating strings, so this asks from outside.)
  await expect.poll(() => polls(page)).toBeGreaterThanOrEqual(n);
}

describe.skipIf(UNAVAILABLE !== undefined)(
  `the status page in Chromium${UNAVAILABLE ? ` (skipped: ${UNAVAILABLE})` : ''}`,
  { timeout: 2 * BROWSER_TIMEOUT_MS },
  () => {
    it('lists the six nodes, shows a cordon at its next polls, and stays on its own origin', async () => {
      demo = await startMeteredDemo();
      const origin = new URL(demo.admin).origin;
      const context = await openContext(browser!, { viewport: { width: 1500, height: 760 } });
      const page = await context.newPage();
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      await page.goto(`${demo.admin}/status`);
      await pollsReach(page, 1);

      const before = await states(page);
      expect(Object.keys(before)).toEqual(MOCK_NODES);
      for (const state of Object.values(before)) expect(['up', 'unknown']).toContain(state);

      // Traffic while the page watches: Helius-1 is past its threshold, so Helius-2 takes it.
      for (let round = 0; round < 4; round++) {
        await Promise.all([sendRequests(demo.url, 40), sendRequests(demo.url, 40)]);
        await pollsReach(page, (await polls(page)) + 1);
      }
      const cordon = await fetch(`${demo.admin}/admin/nodes/Alchemy-2/cordon`, { method: 'POST' });
      expect(cordon.status).toBe(200);
      // A poll that started after the cordon returned must show it: the second one from now.
      await pollsReach(page, (await polls(page)) + 2);
      const after = await states(page);
      expect(after['Alchemy-2']).toBe('cordoned');
      expect(after['Helius-2']).toBe('up');
      expect(await page.textContent('#events')).toContain('Alchemy-2 cordoned');
      const sparkPoints =
        (await page
          .locator('tr[data-node="Helius-2"] svg.spark polyline')
          .getAttribute('points')) ?? '';
      expect(sparkPoints.split(' ').length).toBeGreaterThan(4);
      expect(await page.locator('.quota .threshold').count()).toBe(4);

      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(requested.length).toBeGreaterThan(4);
      for (const url of requested) expect(new URL(url).origin).toBe(origin);
      await context.close();
    });

    it('shows the table without JavaScript', async () => {
      demo = await startDemo();
      const context = await openContext(browser!, { javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${demo.admin}/status`);
      expect(Object.keys(await states(page))).toEqual(DEMO_NODES);
      await context.close();
    });
  },
);
