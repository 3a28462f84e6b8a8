/**
 * A client key's budget across `kill -9` (issue 27): the server is killed at a different point
 * of its 1 s quotas.json flush each round while the key spends, and started again on the same
 * file. quotas.json is always whole and valid, the key's usage in it never goes backwards nor
 * past the budget, never counts a call the node did not get, and once the budget is spent the
 * call that would pass it is refused by every server started afterwards, killed or not.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keyHash } from '../../src/core/config/keys-section.js';
import { parseQuotaFile } from '../../src/core/quota/quota-format.js';
import { startMockNodes } from '../../src/mock/index.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const KEY = 'ck_crash_budget_0123456789abcdefghij';
const PRICE = 3;
/** 100 calls at 3 credits; at rps_limit 40 the key spends it over several 1 s flushes. */
const BUDGET = 300;

/** The key's usage in quotas.json on disk (0 before the first write). */
function keyUsage(quotas: string): number {
  if (!existsSync(quotas)) return 0;
  return parseQuotaFile(readFileSync(quotas, 'utf8'), quotas).get('key:web')?.used ?? 0;
}

async function call(url: string): Promise<{ status: number; message: string }> {
  const response = await fetch(`${url}/${KEY}`, {
    method: 'POST',
    body: '{"jsonrpc":"2.0","id":1,"method":"getBalance"}',
  });
  const body = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: body.error?.message ?? '' };
}

/** Calls the key back to back until `stop` is set or the server dies; counts the 200s. */
async function spend(url: string, stop: { done: boolean }): Promise<number> {
  let served = 0;
  while (!stop.done) {
    try {
      const { status } = await call(url);
      if (status === 200) served++;
      // A rate or budget refusal: try again a little later.
      else await new Promise((resolve) => setTimeout(resolve, 10));
    } catch {
      return served; // killed
    }
  }
  return served;
}

/** Resolves once quotas.json books more than `than` for the key, or the whole budget. */
async function flushedPast(quotas: string, than: number): Promise<number> {
  for (;;) {
    const used = keyUsage(quotas);
    if (used > than || used === BUDGET) return used;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a key's budget under kill -9", () => {
  it('holds across crashes that race the quotas.json flush: the call that would pass it is refused after restart', async () => {
    const temp = fixture.tempDir();
    const mocks = await startMockNodes([{ name: 'n' }]);
    fixture.mocks.push(...mocks);
    temp.write({
      'prices.toml': `[limits]\n[routing]\ngetBalance = ${PRICE}\n`,
      'config.toml':
        `[server]\nhost = "127.0.0.1"\nport = 0\nquota_flush_seconds = 1\nrequire_key = true\n` +
        `request_timeout_ms = 10000\nattempt_timeout_ms = 5000\n[cache]\nenabled = false\ncoalesce = false\n` +
        `[[keys]]\nname = "web"\nkey_sha256 = "${keyHash(KEY)}"\nmonthly_credits = ${BUDGET}\nrps_limit = 40\n` +
        `[[nodes]]\nname = "n"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
    });
    const quotas = temp.path('quotas.json');
    const serve = async (): Promise<{ p: CliProcess; url: string }> => {
      const p = startCli(['serve', '--config', temp.path('config.toml')], { cwd: temp.dir });
      fixture.processes.push(p);
      return { p, url: (JSON.parse(await p.waitFor(/cascade serving/)) as { url: string }).url };
    };
    const upstreamCalls = () => mocks[0]!.stats().byMethod.getBalance ?? 0;

    let previous = 0;
    for (let round = 0; previous < BUDGET; round++) {
      expect(round, 'rounds to spend the budget').toBeLessThan(30);
      const { p, url } = await serve();
      const stop = { done: false };
      const clients = [spend(url, stop), spend(url, stop), spend(url, stop)];
      // A flush that holds this round's spending (however slow the machine), then a kill at a
      // different point of the 1 s flush cycle each round.
      await flushedPast(quotas, previous);
      await new Promise((resolve) => setTimeout(resolve, (round % 5) * 230));
      p.child.kill('SIGKILL');
      await p.exited();
      stop.done = true;
      await Promise.all(clients);
      const used = keyUsage(quotas);
      expect(used % PRICE).toBe(0);
      expect(used).toBeGreaterThanOrEqual(previous);
      expect(used).toBeLessThanOrEqual(BUDGET);
      // The file never books a call the node did not get (a crash only loses bookings).
      expect(used).toBeLessThanOrEqual(upstreamCalls() * PRICE);
      previous = used;
    }

    // Spent, as the file says: every later server refuses the next call, across kill -9 too.
    for (const stopWith of ['SIGKILL', 'SIGKILL', 'SIGTERM'] as const) {
      const { p, url } = await serve();
      const before = upstreamCalls();
      const refused = await call(url);
      expect(refused.status).toBe(429);
      expect(refused.message).toContain(`has spent its budget of ${BUDGET} credits`);
      expect(upstreamCalls()).toBe(before);
      if (stopWith === 'SIGKILL') {
        p.child.kill('SIGKILL');
        await p.exited();
      } else expect(await p.stop('SIGTERM')).toBe(0);
      expect(keyUsage(quotas)).toBe(BUDGET);
    }
  }, 120_000);
});
