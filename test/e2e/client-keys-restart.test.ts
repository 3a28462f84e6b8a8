/**
 * The operator's runtime key changes survive a restart (issue 27): a key revoked with `cascade
 * key revoke`, a budget set with `cascade key budget`, then the server stopped — gracefully, or
 * with `kill -9` right after the command answered — and started again on the same files: the
 * key is still refused, the budget still in force; an un-revoke survives the same way. The file
 * beside quotas.json names keys and secret fingerprints, never a secret. With `--workers` the
 * primary keeps the file and every worker starts with its changes.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startMockNodes } from '../../src/mock/index.js';
import { callStatus } from '../support/client-keys.js';
import { runCli, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const { processes, mocks } = fixture;
const WEB_KEY = 'web_restart_secret_0123456789abcdef';
const OPS_KEY = 'ops_restart_secret_0123456789abcdef';

interface Row {
  name: string;
  budget: number | null;
  revoked: boolean;
}

async function setUp(workers: number): Promise<{
  start: () => Promise<{ p: CliProcess; url: string }>;
  cli: (...args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>;
  rows: () => Promise<Row[]>;
  changesFile: string;
  dir: string;
}> {
  const temp = fixture.tempDir();
  if (mocks.length === 0) mocks.push(...(await startMockNodes([{ name: 'a' }])));
  const adminPort = await freePort();
  temp.write({
    'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\n',
    'config.toml':
      `[server]\nhost = "127.0.0.1"\nport = 0\nadmin_port = ${adminPort}\nrequire_key = true\n` +
      `[[keys]]\nname = "web"\nkey_env = "WEB_KEY"\nmonthly_credits = 1000\n` +
      `[[keys]]\nname = "ops"\nkey_env = "OPS_KEY"\n` +
      `[[nodes]]\nname = "a"\nurl = "${mocks[0]!.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
  });
  const config = temp.path('config.toml');
  const args = [
    'serve',
    '--config',
    config,
    ...(workers > 0 ? ['--workers', String(workers)] : []),
  ];
  const ready = workers > 0 ? /workers share the port/ : /cascade serving/;
  const start = async () => {
    const p = startCli(args, { cwd: temp.dir, env: { WEB_KEY, OPS_KEY } });
    processes.push(p);
    const url = (JSON.parse(await p.waitFor(ready)) as { url: string }).url;
    return { p, url };
  };
  const cli = (...more: string[]) =>
    runCli([...more, '--config', config], {
      cwd: temp.dir,
      env: { WEB_KEY: undefined, OPS_KEY: undefined },
    });
  const rows = async () => {
    const listed = await cli('key', 'list', '--json');
    expect(listed.code).toBe(0);
    return (JSON.parse(listed.stdout) as { keys: Row[] }).keys;
  };
  return { start, cli, rows, changesFile: temp.path('quotas.key-changes.json'), dir: temp.dir };
}

const row = (rows: Row[], name: string) => rows.find((r) => r.name === name)!;

describe('runtime key changes across restarts', () => {
  it('one server: a revoke and a budget hold across a graceful stop and kill -9; so does an un-revoke', async () => {
    const { start, cli, rows, changesFile } = await setUp(0);
    let { p, url } = await start();
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(200);
    expect((await cli('key', 'revoke', 'web')).code).toBe(0);
    expect((await cli('key', 'budget', 'ops', '50')).code).toBe(0);
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(401);

    // On disk before the command answered: no secret, the key's name and a fingerprint.
    const text = readFileSync(changesFile, 'utf8');
    expect(text).not.toContain(WEB_KEY);
    expect(text).not.toContain(OPS_KEY);
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual([
      'budget:ops',
      expect.stringMatching(/^revoke:web:[0-9a-f]{16}$/) as unknown as string,
    ]);

    expect(await p.stop('SIGTERM')).toBe(0);
    ({ p, url } = await start());
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(401);
    expect(await callStatus(`${url}/${OPS_KEY}`)).toBe(200);
    let listed = await rows();
    expect(row(listed, 'web').revoked).toBe(true);
    expect(row(listed, 'ops').budget).toBe(50);

    // Killed right after the command answered: the un-revoke was on disk already.
    expect((await cli('key', 'unrevoke', 'web')).code).toBe(0);
    p.child.kill('SIGKILL');
    await p.exited();
    ({ p, url } = await start());
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(200);
    listed = await rows();
    expect(row(listed, 'web').revoked).toBe(false);
    expect(row(listed, 'ops').budget).toBe(50);

    // The config's budget again: back to none for ops, after a restart too.
    expect((await cli('key', 'budget', 'ops', 'config')).code).toBe(0);
    expect(await p.stop('SIGTERM')).toBe(0);
    ({ p } = await start());
    expect(row(await rows(), 'ops').budget).toBe(null);
    expect((await cli('key', 'revoke', 'ops')).code).toBe(0);
    expect(await p.stop('SIGTERM')).toBe(0);
    // No server running: `quota show` reads the revokes from the file beside quotas.json.
    const shown = await cli('quota', 'show', '--json');
    expect(shown.code).toBe(0);
    const offline = (JSON.parse(shown.stdout) as { keys: Row[] }).keys;
    expect(row(offline, 'ops').revoked).toBe(true);
    expect(row(offline, 'web').revoked).toBe(false);
    // A reset in the file shows the key as it stands: still revoked.
    const reset = await cli('quota', 'reset', '--key', 'ops');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toMatch(/ops.*revoked/);
  });

  it('a change that cannot be saved is in force, said so (exit 1), logged, and saved once it can be', async () => {
    const { start, cli, changesFile } = await setUp(0);
    let { p, url } = await start();
    // Something in the way of the file (a directory of that name): no write can replace it.
    mkdirSync(changesFile);
    const revoked = await cli('key', 'revoke', 'web');
    expect(revoked.code).toBe(1);
    expect(revoked.stdout).toContain('web revoked: its calls are refused (401) until');
    expect(revoked.stdout).not.toContain('across restarts');
    expect(revoked.stderr).toContain(
      'error: the change is in force but was not saved: cannot write',
    );
    expect(revoked.stderr).toContain('a restart before it is saved undoes it');
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(401);
    await p.waitFor(/client key changed through the admin listener, but not saved/);
    // Out of the way: the server's retry writes it, and a kill -9 then keeps it.
    rmSync(changesFile, { recursive: true });
    await expect.poll(() => existsSync(changesFile), { timeout: 15_000, interval: 100 }).toBe(true);
    p.child.kill('SIGKILL');
    await p.exited();
    ({ p, url } = await start());
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(401);
    expect(await p.stop('SIGTERM')).toBe(0);
  });

  it('a revoke does not wait on quotas.json: a usage file that cannot be written does not fail it', async () => {
    const { start, cli, dir } = await setUp(0);
    const { p, url } = await start();
    const quotas = `${dir}/quotas.json`;
    rmSync(quotas, { force: true });
    mkdirSync(quotas);
    const revoked = await cli('key', 'revoke', 'web');
    expect(revoked.stderr).toBe('');
    expect(revoked.code).toBe(0);
    expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(401);
    rmSync(quotas, { recursive: true });
    expect(await p.stop('SIGTERM')).toBe(0);
  });

  it('a damaged changes file stops the start with an error naming it and how to fix it', async () => {
    const { start, changesFile, dir } = await setUp(0);
    writeFileSync(changesFile, '{"revoke:web:0123456789abcdef": {"value": "yes", "version": 0}}');
    const p = startCli(['serve', '--config', `${dir}/config.toml`], {
      cwd: dir,
      env: { WEB_KEY, OPS_KEY },
    });
    processes.push(p);
    const code = await p.exited();
    expect(code).not.toBe(0);
    expect(p.output()).toContain('quotas.key-changes.json');
    expect(p.output()).toContain(
      '"revoke:web:0123456789abcdef".value must be "1" (revoked) or "0"',
    );
    expect(p.output()).toContain('or delete it: alone, the config’s keys then apply again');
    // Fixed by hand, it starts.
    writeFileSync(changesFile, '{"revoke:web:0123456789abcdef": {"value": "1", "version": 0}}');
    const again = await start();
    expect(await again.p.stop('SIGTERM')).toBe(0);
    expect(existsSync(changesFile)).toBe(true);
  });

  it('--workers: the primary keeps the changes and every worker starts with them', async () => {
    const { start, cli, rows } = await setUp(2);
    let { p, url } = await start();
    expect((await cli('key', 'revoke', 'web')).code).toBe(0);
    p.child.kill('SIGKILL');
    await p.exited();
    ({ p, url } = await start());
    // Every call lands on one worker or the other: all are refused.
    for (let i = 0; i < 6; i++) expect(await callStatus(`${url}/${WEB_KEY}`)).toBe(401);
    expect(await callStatus(`${url}/${OPS_KEY}`)).toBe(200);
    expect(row(await rows(), 'web').revoked).toBe(true);
    expect(await p.stop('SIGTERM')).toBe(0);
  });
});
