/**
 * `cascade serve --workers 2` reloads as one process does — the same plan, the same log lines,
 * the same admin answer — and its workers serve only the config the primary checked: a
 * worker never reads the file, so a file rewritten after the primary's check cannot reach it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { recordingUpstream, stopRecordingUpstreams } from '../support/recording-upstream.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';

const temps: TempDir[] = [];
const proxies: CliProcess[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  for (const proxy of proxies.splice(0))
    if (proxy.child.exitCode === null) await proxy.stop('SIGKILL');
  stopRecordingUpstreams();
  for (const temp of temps.splice(0)) temp.cleanup();
});

const PRICES = '[routing]\n[limits]\nunknown_method_cost = 1\n';
/** A price list with a misspelt method: the config loads, with a warning. */
const PRICES_WITH_WARNING = '[routing]\ngetBalanse = 1\n[limits]\nunknown_method_cost = 1\n';

interface Served {
  readonly proxy: CliProcess;
  readonly temp: TempDir;
  readonly url: string;
  readonly admin: number;
  /** Rewrites config.toml: `[server] max_batch_size` and the node's URL. */
  write(maxBatchSize: number, upstream: string): void;
}

/** Starts `cascade serve` (one process, or `--workers 2`) with node n on `upstream`. */
async function serve(workers: 1 | 2, upstream: string): Promise<Served> {
  const temp = makeTempDir('cascade-workers-reload-');
  temps.push(temp);
  const port = await freePort();
  const admin = await freePort();
  const write = (maxBatchSize: number, node: string): void =>
    writeFileSync(
      temp.path('config.toml'),
      `[server]\nhost = "127.0.0.1"\nport = ${port}\nadmin_port = ${admin}\n` +
        `max_batch_size = ${maxBatchSize}\n\n[cache]\nenabled = false\ncoalesce = false\n\n` +
        `[[nodes]]\nname = "n"\nurl = "${node}"\ntier = 0\nmonthly_limit = 0\n` +
        `provider_pricing_path = "prices.toml"\n`,
    );
  writeFileSync(temp.path('prices.toml'), PRICES);
  write(10, upstream);
  const args = ['serve', '--config', 'config.toml'];
  const proxy = startCli(workers === 2 ? [...args, '--workers', '2'] : args, { cwd: temp.dir });
  proxies.push(proxy);
  await proxy.waitFor(workers === 2 ? /workers share the port/ : /cascade serving/);
  const url = `http://127.0.0.1:${port}`;
  // Serving once every worker listens.
  if (workers === 2) await expect.poll(() => countLines(proxy, /"worker serving"/)).toBe(2);
  return { proxy, temp, url, admin, write };
}

function countLines(proxy: CliProcess, pattern: RegExp): number {
  return proxy
    .output()
    .split('\n')
    .filter((line) => pattern.test(line)).length;
}

/** The primary's (or the one process's) log lines from `from` on, comparable across runs. */
function primaryLines(served: Served, from: number): unknown[] {
  return served.proxy
    .output()
    .slice(from)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line.replaceAll(served.temp.dir, '<dir>')) as Record<string, unknown>)
    .filter((line) => line.worker === undefined)
    .map(({ time: _t, pid: _p, hostname: _h, ...rest }) => rest);
}

/** One request on a connection of its own: node:cluster hands each to the next worker. */
function postFresh(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end('{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
  });
}

/** Reloads `served` by SIGHUP with a changed `[server]` key, a new node URL and a warning. */
async function reloadChanged(served: Served, upstream: string) {
  const from = served.proxy.output().length;
  writeFileSync(served.temp.path('prices.toml'), PRICES_WITH_WARNING);
  served.write(20, upstream);
  served.proxy.child.kill('SIGHUP');
  await expect.poll(() => countLines(served.proxy, /config reloaded/)).toBe(1);
  const lines = primaryLines(served, from);
  const answer = await fetch(`http://127.0.0.1:${served.admin}/admin/reload`, { method: 'POST' });
  return { lines, answer: { status: answer.status, body: await answer.json() } };
}

describe('cascade serve --workers 2: reload', { timeout: 180_000 }, () => {
  it('reports a changed [server] key as needing a restart, and the warnings, exactly as one process does', async () => {
    const [a, b] = [await recordingUpstream(), await recordingUpstream()];
    const one = await serve(1, a.url);
    const single = await reloadChanged(one, b.url);
    await one.proxy.stop('SIGTERM');
    const two = await serve(2, a.url);
    const workers = await reloadChanged(two, b.url);

    expect(single.lines).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^config: .*getBalanse/) }),
      expect.objectContaining({
        level: 40,
        msg: 'server.max_batch_size changed: needs restart; ignored until then',
      }),
      expect.objectContaining({
        level: 30,
        msg: expect.stringMatching(/^config reloaded: \+0 -0 ~1/),
      }),
    ]);
    expect(workers.lines).toEqual(single.lines);
    expect(single.answer.body).toMatchObject({
      ok: true,
      needs_restart: ['server.max_batch_size'],
    });
    expect(workers.answer).toEqual(single.answer);
    // The workers serve the reloaded node set: a round of new connections all reach the new URL.
    await expect
      .poll(async () => {
        const before = (await b.report()).arrivals.length;
        for (let i = 0; i < 4; i++) await postFresh(two.url);
        return (await b.report()).arrivals.length - before;
      })
      .toBe(4);
    const settled = (await a.report()).arrivals.length;
    for (let i = 0; i < 6; i++) expect(await postFresh(two.url)).toBe(200);
    expect((await a.report()).arrivals.length).toBe(settled);
  });

  it('starts a replacement worker from the config the primary checked, not the file as rewritten since', async () => {
    const [checked, rewritten] = [await recordingUpstream(), await recordingUpstream()];
    const served = await serve(2, checked.url);
    // After the primary's check: the file now names another upstream (no reload asked).
    served.write(10, rewritten.url);
    const primary = served.proxy.child.pid!;
    const pids = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8')
      .trim()
      .split(/\s+/);
    process.kill(Number(pids[0]), 'SIGKILL');
    await served.proxy.waitFor(/worker exited; restarting it/);
    // The replacement has started (after the rewrite) and listens.
    await expect
      .poll(() => countLines(served.proxy, /"worker serving"/), { timeout: 30_000 })
      .toBe(3);
    // node:cluster hands new connections to the workers in turn: both serve some of these.
    for (let i = 0; i < 20; i++) expect(await postFresh(served.url)).toBe(200);
    expect((await rewritten.report()).arrivals).toHaveLength(0);
    expect((await checked.report()).arrivals).toHaveLength(20);
  });
});
