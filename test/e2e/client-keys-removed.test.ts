/**
 * A client key removed by a reload keeps what it spent this period (issue 27): put back under
 * the same name — by a reload or at the next start — its budget is not refilled, and quotas.json
 * keeps its `key:NAME` entry meanwhile.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startMockNodes } from '../../src/mock/index.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { callStatus } from '../support/client-keys.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const { processes, mocks } = fixture;

function entry(name: string, key: string, extra = ''): string {
  const sha = createHash('sha256').update(key).digest('hex');
  return `[[keys]]\nname = "${name}"\nkey_sha256 = "${sha}"\n${extra}`;
}

describe('a removed key put back', { timeout: 60_000 }, () => {
  it('keeps its spent budget, in memory and in quotas.json', async () => {
    const web = `ck_${randomBytes(32).toString('base64url')}`;
    const ops = `ck_${randomBytes(32).toString('base64url')}`;
    const temp = fixture.tempDir();
    mocks.push(...(await startMockNodes([{ name: 'a' }])));
    const withWeb = `${entry('web', web, 'monthly_credits = 5\n')}\n${entry('ops', ops)}`;
    const withoutWeb = entry('ops', ops);
    temp.write({
      'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\ngetSlot = 2\n',
      'keys.toml': withWeb,
      'config.toml':
        `keys_file = "keys.toml"\n[server]\nhost = "127.0.0.1"\nport = 0\nrequire_key = true\n` +
        `[[nodes]]\nname = "a"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
    });
    const serve = async (): Promise<{ p: CliProcess; url: string }> => {
      const p = startCli(['serve', '--config', temp.path('config.toml')], { cwd: temp.dir });
      processes.push(p);
      const line = await p.waitFor(/cascade serving/);
      return { p, url: (JSON.parse(line) as { url: string }).url };
    };
    let reloads = 0;
    const reload = async (p: CliProcess, keys: string) => {
      writeFileSync(temp.path('keys.toml'), keys);
      reloads++;
      p.child.kill('SIGHUP');
      await expect
        .poll(() => p.output().match(/config reloaded/g)?.length ?? 0, { timeout: 30_000 })
        .toBe(reloads);
    };

    let { p, url } = await serve();
    expect(await callStatus(`${url}/${web}`)).toBe(200);
    expect(await callStatus(`${url}/${web}`)).toBe(200);
    expect(await callStatus(`${url}/${web}`)).toBe(429);
    await reload(p, withoutWeb);
    expect(await callStatus(`${url}/${web}`)).toBe(401);
    // Put back: the 4 credits it spent still count against its 5.
    await reload(p, withWeb);
    expect(await callStatus(`${url}/${web}`)).toBe(429);
    expect(await callStatus(`${url}/${ops}`)).toBe(200);

    // Removed again, then stopped: the file keeps what web spent.
    await reload(p, withoutWeb);
    expect(await p.stop('SIGTERM')).toBe(0);
    const saved = JSON.parse(readFileSync(temp.path('quotas.json'), 'utf8')) as Record<
      string,
      { used: number }
    >;
    expect(saved['key:web']?.used).toBe(4);
    expect(saved['key:ops']?.used).toBe(2);

    // A start without web keeps the entry; web put back at the next start still has it spent.
    ({ p, url } = await serve());
    expect(await p.stop('SIGTERM')).toBe(0);
    writeFileSync(temp.path('keys.toml'), withWeb);
    ({ p, url } = await serve());
    expect(await callStatus(`${url}/${web}`)).toBe(429);
    expect(await p.stop('SIGTERM')).toBe(0);
  });
});
