/**
 * Client keys end to end through `cascade` (issue 27): `key new` prints a key once and the
 * lines to paste; `serve` reads the keys file named by the config and reloads it on SIGHUP;
 * `key list|revoke|budget` and `quota show|reset --key` change and report keys on the running
 * server; a budget of N credits refuses the call that would pass N, across a restart and a
 * kill -9 after a flush. No output of any command, no log line, no quotas.json holds a secret.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startMockNodes } from '../../src/mock/index.js';
import { callStatus } from '../support/client-keys.js';
import { runCli, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const { processes, mocks } = fixture;

function keyOf(output: string): { key: string; lines: string } {
  const key = /^ {2}(ck_[A-Za-z0-9_-]{43})$/m.exec(output)![1]!;
  const lines = /\[\[keys\]\][\s\S]*?key_sha256 = "[0-9a-f]{64}"/.exec(output)![0];
  return { key, lines };
}

describe('cascade with client keys', () => {
  it('creates, reloads, lists, budgets, revokes and resets keys; a budget holds across restarts', async () => {
    const temp = fixture.tempDir();
    mocks.push(...(await startMockNodes([{ name: 'a' }])));
    const outputs: string[] = [];
    const web = await runCli(['key', 'new', 'web']);
    const ops = await runCli(['key', 'new', 'ops']);
    outputs.push(web.stdout, ops.stdout);
    const webKey = keyOf(web.stdout);
    const opsKey = keyOf(ops.stdout);
    const adminPort = await freePort();
    temp.write({
      'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\ngetSlot = 2\n',
      'keys.toml': `${webKey.lines}\nmonthly_credits = 5\n`,
      'config.toml':
        `keys_file = "keys.toml"\n[server]\nhost = "127.0.0.1"\nport = 0\nadmin_port = ${adminPort}\n` +
        `require_key = true\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000\n` +
        `[[nodes]]\nname = "a"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
    });
    const config = temp.path('config.toml');
    const serve = async (): Promise<{ p: CliProcess; url: string }> => {
      const p = startCli(['serve', '--config', config], { cwd: temp.dir });
      processes.push(p);
      const line = await p.waitFor(/cascade serving/);
      return { p, url: (JSON.parse(line) as { url: string }).url };
    };
    const cli = async (...args: string[]) => {
      const result = await runCli([...args, '--config', config], { cwd: temp.dir });
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    let { p, url } = await serve();
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect(await callStatus(`${url}/${opsKey.key}`)).toBe(401);
    // The ops key joins through the keys file and a reload, no restart.
    writeFileSync(
      temp.path('keys.toml'),
      `${webKey.lines}\nmonthly_credits = 5\n\n${opsKey.lines}\n`,
    );
    p.child.kill('SIGHUP');
    await p.waitFor(/config reloaded/);
    expect(await callStatus(`${url}/${opsKey.key}`)).toBe(200);

    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(429);
    const list = await cli('key', 'list', '--json');
    const rows = (JSON.parse(list.stdout) as { keys: Array<{ name: string; used: number }> }).keys;
    expect(rows.map((row) => [row.name, row.used])).toEqual([
      ['web', 4],
      ['ops', 2],
    ]);
    const shown = await cli('quota', 'show');
    expect(shown.stdout).toMatch(/web\s+│?\s*4/);

    expect((await cli('key', 'budget', 'web', '7')).code).toBe(0);
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect((await cli('quota', 'reset', '--key', 'web')).code).toBe(0);
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect((await cli('key', 'revoke', 'ops')).code).toBe(0);
    expect(await callStatus(`${url}/${opsKey.key}`)).toBe(401);
    expect(await p.stop('SIGTERM')).toBe(0);
    outputs.push(p.output());

    // web spent 2 since the reset; the budget of 7 set at runtime holds across the restart, as
    // does the revoke of ops: two more calls (4, 6), and the next would pass 7.
    ({ p, url } = await serve());
    expect(await callStatus(`${url}/${opsKey.key}`)).toBe(401);
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(429);
    // kill -9 after the write a reset forces: what was written is what the next start reads.
    expect((await cli('quota', 'reset', '--key', 'web')).code).toBe(0);
    p.child.kill('SIGKILL');
    await p.exited();
    outputs.push(p.output());
    const saved = readFileSync(temp.path('quotas.json'), 'utf8');
    expect(JSON.parse(saved)['key:web'].used).toBe(0);
    ({ p, url } = await serve());
    expect(await callStatus(`${url}/${webKey.key}`)).toBe(200);
    expect(await p.stop('SIGTERM')).toBe(0);
    outputs.push(
      p.output(),
      readFileSync(temp.path('quotas.json'), 'utf8'),
      readFileSync(temp.path('quotas.key-changes.json'), 'utf8'),
    );

    const everything = outputs.join('\n');
    // `key new` prints its key (once per run, and in the URL example); nothing else ever does.
    const rest = outputs.slice(2).join('\n');
    expect(everything).toContain('key_sha256');
    for (const secret of [webKey.key, opsKey.key]) expect(rest).not.toContain(secret);
  });
});
