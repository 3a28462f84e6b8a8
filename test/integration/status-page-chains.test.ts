/**
 * The live status page of a proxy serving two chains with a shared provider account, in a
 * real browser (Debian's Chromium): each chain's nodes under a row naming the chain, its paths
 * and status, and an accounts panel whose bar shows the pool against its quota and spillover
 * mark; the same without JavaScript. A plain `[[nodes]]` page is covered by
 * test/e2e/status-page.test.ts (no chain rows, no accounts panel). Skipped without Chromium.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  BROWSER_TIMEOUT_MS,
  browserUnavailable,
  closeBrowsers,
  launchBrowser,
  openContext,
} from '../support/browser.js';
import { startMultiChain, type MultiChain } from '../support/multi-chain.js';

const UNAVAILABLE = browserUnavailable();
if (UNAVAILABLE) console.warn(`status page chain tests skipped: ${UNAVAILABLE}`);

let browser: Browser | undefined;
let harness: MultiChain | undefined;

beforeAll(async () => {
  if (!UNAVAILABLE) browser = await launchBrowser();
}, BROWSER_TIMEOUT_MS + 30_000);
afterAll(closeBrowsers);
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const rpc = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] });

async function twoChains(): Promise<MultiChain> {
  const h = await startMultiChain(
    [
      {
        name: 'sol',
        nodes: [
          { name: 'sol-prem', toml: 'tier = 0\naccount = "shared"' },
          { name: 'sol-backup', toml: 'tier = 1\nmonthly_limit = 0' },
        ],
      },
      {
        name: 'evm',
        toml: 'paths = ["/evm", "/base"]',
        nodes: [
          { name: 'evm-prem', toml: 'tier = 0\naccount = "shared"' },
          { name: 'evm-backup', toml: 'tier = 1\nmonthly_limit = 0' },
        ],
      },
    ],
    {
      top: [
        'admin_port = 0',
        '[cache]\nenabled = false\ncoalesce = false',
        '[[accounts]]\nname = "shared"\nmonthly_limit = 40\nspillover_percent = 50',
      ].join('\n'),
    },
  );
  // One call past the pool's 20-credit spillover mark: 21 of its 40 credits, then the backups.
  for (let i = 0; i < 15; i++) {
    await h.post('/sol', rpc('getSlot', i));
    await h.post('/evm', rpc('eth_blockNumber', i));
  }
  return h;
}

/** The page's node and chain rows in table order: `chain:NAME` or the node name. */
async function tableRows(page: Page): Promise<string[]> {
  const shown: string[] = [];
  for (const row of await page.locator('#nodes tbody tr').all()) {
    const chain = await row.getAttribute('data-chain');
    shown.push(chain === null ? ((await row.getAttribute('data-node')) ?? '?') : `chain:${chain}`);
  }
  return shown;
}

describe.skipIf(UNAVAILABLE !== undefined)(
  `the status page with chains and accounts${UNAVAILABLE ? ` (skipped: ${UNAVAILABLE})` : ''}`,
  { timeout: 2 * BROWSER_TIMEOUT_MS },
  () => {
    it('groups nodes by chain and shows the account pool against its quota', async () => {
      harness = await twoChains();
      const admin = `http://127.0.0.1:${harness.cascade.adminPort}`;
      const context = await openContext(browser!);
      const page = await context.newPage();
      await page.goto(`${admin}/status`);
      await expect.poll(async () => Number(await page.getAttribute('body', 'data-polls'))).toBe(1);
      expect(await tableRows(page)).toEqual([
        'chain:sol',
        'sol-prem',
        'sol-backup',
        'chain:evm',
        'evm-prem',
        'evm-backup',
      ]);
      expect(await page.textContent('tr[data-chain="evm"]')).toBe(
        'chain evm — /evm, /baseok, 2 of 2 nodes active',
      );
      expect(await page.textContent('tr[data-node="sol-prem"] td:first-child')).toBe(
        'sol-premaccount shared',
      );
      expect(await page.isVisible('#accounts-section')).toBe(true);
      const account = page.locator('#accounts tr[data-account="shared"]');
      expect(await account.locator('td').nth(1).textContent()).toBe('sol-prem, evm-prem');
      expect(await account.locator('td').nth(5).textContent()).toBe('21 / 40');
      // The bar: 52.5% of the quota used, past the spillover mark at 50%.
      const used = account.locator('.quota .used');
      expect(await used.getAttribute('class')).toBe('used over');
      expect(await used.getAttribute('style')).toBe('width: 52.5%;');
      const mark = account.locator('.quota .threshold');
      expect(await mark.getAttribute('style')).toBe('left: 50%;');
      await context.close();
    });

    it('shows the chain groups and the accounts without JavaScript', async () => {
      harness = await twoChains();
      const admin = `http://127.0.0.1:${harness.cascade.adminPort}`;
      const context = await openContext(browser!, { javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${admin}/status`);
      expect(await tableRows(page)).toEqual([
        'chain:sol',
        'sol-prem',
        'sol-backup',
        'chain:evm',
        'evm-prem',
        'evm-backup',
      ]);
      expect(await page.isVisible('#accounts-section')).toBe(true);
      expect(
        await page.locator('#accounts tr[data-account="shared"] td').nth(5).textContent(),
      ).toBe('21 / 40');
      await context.close();
    });
  },
);
