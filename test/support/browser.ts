/**
 * A real headless Chromium for tests that need a browser: Debian's `chromium` package driven
 * by playwright-core (which downloads no browser of its own). Tests skip, saying why, when
 * the binary is missing; .ci/run installs the package. Every browser launched here is
 * closed by `closeBrowsers` (call it in afterEach/afterAll).
 */
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Where Debian puts Chromium; `CHROMIUM_PATH` points elsewhere. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Flags for a machine with no network but loopback: no background fetches (they fail at
 * every start), no sandbox (tests run as root), no GPU, no QUIC. Playwright adds
 * `--headless` and a fresh, empty `--user-data-dir` for every launch itself.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why a browser test cannot run on this machine, or undefined when it can. */
export function browserUnavailable(): string | undefined {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return undefined;
  } catch {
    return `no Chromium at ${CHROMIUM_PATH} — install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`;
  }
}

const open: Browser[] = [];

/**
 * How long a launch or a page action may take before the test reports a hang. Only a hang
 * guard: a busy two-core machine can take far longer than Playwright's 30 s default to start
 * Chromium, and no assertion depends on how long anything took.
 */
export const BROWSER_TIMEOUT_MS = 150_000;

/** Launches headless Chromium. */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: BROWSER_TIMEOUT_MS,
  });
  open.push(browser);
  return browser;
}

/** A fresh browser context whose page actions get the same hang guard as the launch. */
export async function openContext(
  browser: Browser,
  options?: Parameters<Browser['newContext']>[0],
): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
  return context;
}

/** Closes every browser launched so far. */
export async function closeBrowsers(): Promise<void> {
  await Promise.all(open.splice(0).map((browser) => browser.close()));
}
