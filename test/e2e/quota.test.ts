import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { startMockNodes } from '../../src/mock/index.js';
import { runCli } from '../helpers/run-cli.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { useE2eFixture } from '../support/e2e-fixture.js';

const fixture = useE2eFixture();
const { processes, mocks } = fixture;

interface Setup {
  dir: string;
  config: string;
  quotas: string;
  write(
    nodes: Array<{ name: string; tier?: number; monthly?: number; resetDay?: number }>,
    extra?: string,
  ): void;
}

/** A temp dir with a price list (getBalance 5, getSlot 1) and a config writer. */
async function setup(mockNames: string[]): Promise<Setup> {
  const temp = fixture.tempDir();
  mocks.push(...(await startMockNodes(mockNames.map((name) => ({ name })))));
  temp.write({
    'prices.toml': '[limits]\nunknown_method_cost = 1\n[routing]\ngetBalance = 5\ngetSlot = 1\n',
  });
  const config = temp.path('config.toml');
  return {
    dir: temp.dir,
    config,
    quotas: temp.path('quotas.json'),
    write(nodes, extra = '') {
      const blocks = nodes.map((node, i) => {
        const mock = mocks.find((m) => m.name === node.name) ?? mocks[i % mocks.length]!;
        return `[[nodes]]\nname = "${node.name}"\nurl = "${mock.url}"\ntier = ${node.tier ?? i}\nmonthly_limit = ${node.monthly ?? 1000}\nreset_day = ${node.resetDay ?? 1}\nprovider_pricing_path = "prices.toml"\n`;
      });
      // Deadlines far past any answer: the mocks share this test process, which a busy
      // machine can pause for longer than the default 500 ms attempt deadline.
      writeFileSync(
        config,
        `[server]\nhost = "127.0.0.1"\nport = 0\nrequest_timeout_ms = 10000\nattempt_timeout_ms = 5000\n${extra}\n${blocks.join('\n')}`,
      );
    },
  };
}

async function serve(s: Setup): Promise<{ p: CliProcess; url: string }> {
  const p = startCli(['serve', '--config', s.config], { cwd: s.dir });
  processes.push(p);
  const line = await p.waitFor(/cascade serving/);
  return { p, url: (JSON.parse(line) as { url: string }).url };
}

async function call(url: string, method: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
  });
  await response.text();
  return response.status;
}

async function show(s: Setup): Promise<{
  source: string;
  nodes: Array<{ name: string; used: number; period_start: string; threshold: number | null }>;
}> {
  const result = await runCli(['quota', 'show', '--config', s.config, '--json'], { cwd: s.dir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Awaited<ReturnType<typeof show>>;
}

function fileUsage(s: Setup): Record<string, { used: number; period_start: string }> {
  return JSON.parse(readFileSync(s.quotas, 'utf8')) as Record<
    string,
    { used: number; period_start: string }
  >;
}

describe('credits end to end', () => {
  it('books usage per request, shows it live through the admin listener, and flushes on SIGTERM', async () => {
    const s = await setup(['a']);
    s.write([{ name: 'a' }], `admin_port = ${await freePort()}`);
    const { p, url } = await serve(s);
    expect(existsSync(s.quotas)).toBe(false);
    await call(url, 'getBalance');
    await call(url, 'getSlot');
    const live = await show(s);
    expect(live.source).toBe('server');
    expect(live.nodes[0]).toMatchObject({ name: 'a', used: 6, threshold: 950 });
    const table = await runCli(['quota', 'show', '--config', s.config], { cwd: s.dir });
    expect(table.stdout).toContain('live numbers from the running server');
    expect(await p.stop('SIGTERM')).toBe(0);
    expect(fileUsage(s).a!.used).toBe(6);
    const fromFile = await show(s);
    expect(fromFile.source).toBe('file');
    expect(fromFile.nodes[0]!.used).toBe(6);
  });

  it('keeps usage across a restart', async () => {
    const s = await setup(['a']);
    s.write([{ name: 'a' }]);
    let run = await serve(s);
    await call(run.url, 'getBalance');
    await run.p.stop('SIGTERM');
    run = await serve(s);
    await call(run.url, 'getBalance');
    await run.p.stop('SIGTERM');
    expect(fileUsage(s).a!.used).toBe(10);
  });

  it('starts from zero after a restart across a billing boundary', async () => {
    const s = await setup(['a']);
    s.write([{ name: 'a' }]);
    writeFileSync(
      s.quotas,
      '{\n  "a": {\n    "used": 900,\n    "period_start": "2020-01-01"\n  }\n}',
    );
    const { p, url } = await serve(s);
    await call(url, 'getSlot');
    await p.stop('SIGTERM');
    const entry = fileUsage(s).a!;
    expect(entry.used).toBe(1);
    expect(entry.period_start).not.toBe('2020-01-01');
  });

  it('refuses to start on a corrupt file, naming it and the way out; reset --all rewrites it', async () => {
    const s = await setup(['a']);
    s.write([{ name: 'a' }]);
    writeFileSync(s.quotas, '{"a": {"used": "lots", "period_start": "2026-01-01"}}');
    const refused = await runCli(['serve', '--config', s.config], { cwd: s.dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(s.quotas);
    expect(refused.stderr).toContain('used');
    expect(refused.stderr).toContain('cascade quota reset --all');
    const noYes = await runCli(['quota', 'reset', '--all', '--config', s.config], { cwd: s.dir });
    expect(noYes.code).toBe(2);
    const reset = await runCli(['quota', 'reset', '--all', '--yes', '--config', s.config], {
      cwd: s.dir,
    });
    expect(reset.code, reset.stderr).toBe(0);
    expect(fileUsage(s).a!.used).toBe(0);
    const { p } = await serve(s);
    expect(await p.stop('SIGTERM')).toBe(0);
  });

  it('resets through the running server so its next flush cannot undo it', async () => {
    const s = await setup(['a', 'b']);
    s.write([{ name: 'a' }, { name: 'b' }], `admin_port = ${await freePort()}`);
    const { p, url } = await serve(s);
    await call(url, 'getBalance');
    const reset = await runCli(['quota', 'reset', 'a', '--config', s.config], { cwd: s.dir });
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain('through the running server');
    expect((await show(s)).nodes[0]!.used).toBe(0);
    expect(fileUsage(s).a!.used).toBe(0);
    await call(url, 'getSlot');
    await p.stop('SIGTERM');
    expect(fileUsage(s).a!.used).toBe(1);
  });

  it('refuses a file reset while a server without admin_port is using the file', async () => {
    const s = await setup(['a']);
    s.write([{ name: 'a' }]);
    await serve(s);
    const reset = await runCli(['quota', 'reset', 'a', '--config', s.config], { cwd: s.dir });
    expect(reset.code).toBe(2);
    expect(reset.stderr).toContain('admin_port');
  });

  it('resets the file when no server runs, and rejects unknown names listing the known ones', async () => {
    const s = await setup(['a', 'b']);
    s.write([{ name: 'a' }, { name: 'b' }]);
    writeFileSync(
      s.quotas,
      '{\n  "a": {\n    "used": 40,\n    "period_start": "2026-12-01"\n  },\n  "b": {\n    "used": 7,\n    "period_start": "2026-12-01"\n  }\n}',
    );
    const unknown = await runCli(['quota', 'reset', 'zzz', '--config', s.config], { cwd: s.dir });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('known nodes: a, b');
    const reset = await runCli(['quota', 'reset', 'a', '--config', s.config], { cwd: s.dir });
    expect(reset.code).toBe(0);
    expect(fileUsage(s)).toEqual({
      a: { used: 0, period_start: '2026-12-01' },
      b: { used: 7, period_start: '2026-12-01' },
    });
  });
});

describe('hot reload (SIGHUP)', () => {
  it('keeps surviving nodes’ usage, adds new ones at 0, drops removed ones, and logs a diff', async () => {
    const s = await setup(['a', 'b', 'c']);
    s.write([{ name: 'a' }, { name: 'b' }], `admin_port = ${await freePort()}`);
    const { p, url } = await serve(s);
    await call(url, 'getBalance');
    s.write([{ name: 'a', monthly: 2000 }, { name: 'c' }], `admin_port = 1`);
    p.child.kill('SIGHUP');
    await p.waitFor(/config reloaded/);
    expect(p.output()).toMatch(/\+1 -1 ~1/);
    expect(p.output()).toContain('server.admin_port changed: needs restart');
    const live = await show(s);
    expect(live.nodes.map((n) => [n.name, n.used, n.threshold])).toEqual([
      ['a', 5, 1900],
      ['c', 0, 950],
    ]);
    await p.stop('SIGTERM');
    expect(Object.keys(fileUsage(s))).toEqual(['a', 'c']);
  });

  it('keeps serving the old set when the reloaded config is broken', async () => {
    const s = await setup(['a']);
    s.write([{ name: 'a' }]);
    const { p, url } = await serve(s);
    writeFileSync(
      s.config,
      '[server]\nhost = "127.0.0.1"\nport = 0\n[[nodes]]\nname = "a"\nrps_limit = 0\n',
    );
    p.child.kill('SIGHUP');
    await p.waitFor(/config reload failed; keeping the running config/);
    expect(await call(url, 'getSlot')).toBe(200);
    expect(await p.stop('SIGTERM')).toBe(0);
  });
});
