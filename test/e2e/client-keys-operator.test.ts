/**
 * The operator's key commands as an operator runs them (issue 27): `key list|revoke` and `quota
 * show|reset --key` from a shell that does not hold the clients' secrets (`key_env` variables
 * unset there: the commands name keys, they never match one); `quota reset --key` with a name
 * that is not a key resets nothing; a reload that moves a key's `reset_day` keeps what the key
 * spent, as it does for nodes.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startMockNodes } from '../../src/mock/index.js';
import { callStatus } from '../support/client-keys.js';
import { runCli, startCli } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const { processes, mocks } = fixture;
const WEB_KEY = 'web_secret_0123456789abcdef';
const OPS_KEY = 'ops_secret_0123456789abcdef';

describe('key commands from an operator shell', () => {
  it('work without the secrets, refuse unknown names before resetting, keep usage across a reset_day move', async () => {
    const temp = fixture.tempDir();
    mocks.push(...(await startMockNodes([{ name: 'a' }])));
    const adminPort = await freePort();
    const keys = (resetDay: number) =>
      `[[keys]]\nname = "web"\nkey_env = "WEB_KEY"\nmonthly_credits = 100\nreset_day = ${resetDay}\n\n` +
      `[[keys]]\nname = "ops"\nkey_env = "OPS_KEY"\n`;
    // The first reset day is today: the period in force started today. The moved one (the next
    // day, or the 1st late in a month) puts the current period's start before that.
    const today = new Date().getUTCDate();
    const first = today;
    const moved = today >= 28 ? 1 : today + 1;
    temp.write({
      'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\ngetSlot = 2\n',
      'keys.toml': keys(first),
      'config.toml':
        `keys_file = "keys.toml"\n[server]\nhost = "127.0.0.1"\nport = 0\nadmin_port = ${adminPort}\n` +
        `require_key = true\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000\n` +
        `[[nodes]]\nname = "a"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
    });
    const config = temp.path('config.toml');
    const p = startCli(['serve', '--config', config], {
      cwd: temp.dir,
      env: { WEB_KEY, OPS_KEY },
    });
    processes.push(p);
    const url = (JSON.parse(await p.waitFor(/cascade serving/)) as { url: string }).url;
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(200);
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(200);

    // The operator's shell has neither WEB_KEY nor OPS_KEY.
    const cli = (...args: string[]) =>
      runCli([...args, '--config', config], {
        cwd: temp.dir,
        env: { WEB_KEY: undefined, OPS_KEY: undefined },
      });
    const listed = await cli('key', 'list', '--json');
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const used = (out: string) =>
      (JSON.parse(out) as { keys: Array<{ name: string; used: number }> }).keys.find(
        (row) => row.name === 'web',
      )?.used;
    expect(used(listed.stdout)).toBe(4);
    expect((await cli('quota', 'show')).code).toBe(0);

    // A name that is not a key (here a node's): nothing is reset, and the command says why.
    const mixed = await cli('quota', 'reset', '--key', 'web', 'a');
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('unknown key(s): a; nothing was reset');
    expect(used((await cli('key', 'list', '--json')).stdout)).toBe(4);

    // A reload that moves reset_day: the period by the new day began before the one in force,
    // so what web spent stays (as a node's usage would).
    writeFileSync(temp.path('keys.toml'), keys(moved));
    p.child.kill('SIGHUP');
    await p.waitFor(/config reloaded/);
    expect(used((await cli('key', 'list', '--json')).stdout)).toBe(4);

    expect((await cli('key', 'revoke', 'ops')).code).toBe(0);
    expect(await callStatus(`${url}/${OPS_KEY}`)).toBe(401);
    // Each change is in the server's log (who, what); a budget past exact counting is refused.
    await p.waitFor(/client key changed through the admin listener/);
    expect(p.output()).toMatch(/"key":"ops","change":"revoke"/);
    const huge = await fetch(
      `http://127.0.0.1:${adminPort}/admin/keys/web/budget/9007199254740993`,
      {
        method: 'POST',
      },
    );
    expect(huge.status).toBe(400);
    expect(((await huge.json()) as { error: string }).error).toContain('9007199254740993');
    expect(await p.stop('SIGTERM')).toBe(0);
    // Stopped: a reset goes to the file, and a mistyped --quotas is said, not created.
    const typo = await cli('quota', 'reset', '--key', 'web', '--quotas', 'quotas.jsn');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('no usage file at');
    expect(existsSync(temp.path('quotas.jsn'))).toBe(false);
    const saved = JSON.parse(readFileSync(temp.path('quotas.json'), 'utf8')) as Record<
      string,
      { used: number }
    >;
    expect(saved['key:web']?.used).toBe(4);
  });
});
