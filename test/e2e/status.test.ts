/**
 * `cascade status` and `cascade node` against a running demo (`serve --demo --admin-port 0`),
 * run from the demo's working directory as an operator would: the JSON, the table for a pipe,
 * cordon and uncordon, --watch, and one clear error line when no server answers.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { startDemo, sendRequests, type Demo } from '../support/demo-server.js';
import { freePort } from '../support/free-port.js';

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

let demo: Demo | undefined;
let empty: TempDir | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
  empty?.cleanup();
  empty = undefined;
});

interface StatusJson {
  readonly pid: number;
  readonly workers: number;
  readonly nodes: ReadonlyArray<{ name: string; state: string; requests_last_minute: number }>;
}

async function statusJson(dir: string): Promise<StatusJson> {
  const result = await runCli(['status', '--json'], { cwd: dir });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

describe('cascade status', { timeout: 60_000 }, () => {
  it('prints the demo node table as JSON and, for a pipe, as a plain table', async () => {
    demo = await startDemo();
    expect(await sendRequests(demo.url, 5)).toEqual([200, 200, 200, 200, 200]);
    const doc = await statusJson(demo.dir.dir);
    expect(doc.pid).toBe(demo.process.child.pid);
    expect(doc.workers).toBe(1);
    expect(doc.nodes.map((n) => n.name)).toEqual(DEMO_NODES);
    expect(doc.nodes[0]).toMatchObject({ name: 'Helius-1', state: 'up', requests_last_minute: 5 });

    const table = await runCli(['status'], { cwd: demo.dir.dir });
    expect(table.code).toBe(0);
    expect(table.stdout).not.toContain('\x1b[');
    const lines = table.stdout.split('\n');
    // One table per chain, under a line naming it; the demo's Alchemy nodes share an account.
    expect(lines[0]).toBe('chain solana — /, /solana · ok, 6 of 6 nodes active');
    expect(lines[2]).toMatch(
      /│ node\s+│ tier │ account │ rank │ state\s+│ latency ms │ req\/s \(limit\)/,
    );
    expect(table.stdout).toContain('chain eth — /eth · ok, 2 of 2 nodes active');
    expect(
      lines.find((l) => l.includes('│ alchemy │ Alchemy-1, Alchemy-2, Alchemy-eth')),
    ).toBeDefined();
    expect(lines.find((l) => l.includes('Helius-1'))).toMatch(
      /│ Helius-1\s+│ 0\s+│ —\s+│ 1\s+│ up\s+│ [\d.]+\s+│ \d+ \(30,000\)\s+│ 0 \(10,000\)\s+│ 5 \(unmetered\)/,
    );
    expect(table.stdout).toContain(`pid ${demo.process.child.pid} · 1 serving process · as of `);
  });

  it('cordons and uncordons a node of the running server', async () => {
    demo = await startDemo();
    const cordon = await runCli(['node', 'cordon', 'Helius-1'], { cwd: demo.dir.dir });
    expect(cordon.code).toBe(0);
    expect(cordon.stdout).toBe(
      'Helius-1 cordoned: no new requests go to it (in-flight ones finish) and its subscriptions move to other nodes, until `cascade node uncordon Helius-1` or a restart\n',
    );
    await sendRequests(demo.url, 3);
    const cordoned = await statusJson(demo.dir.dir);
    expect(cordoned.nodes[0]).toMatchObject({ state: 'cordoned', requests_last_minute: 0 });
    expect(cordoned.nodes[1]).toMatchObject({ name: 'Helius-2', requests_last_minute: 3 });
    const unknown = await runCli(['node', 'cordon', 'Nope'], { cwd: demo.dir.dir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error: the running server refused: unknown node "Nope"');
    const uncordon = await runCli(['node', 'uncordon', 'Helius-1', '--json'], {
      cwd: demo.dir.dir,
    });
    expect(JSON.parse(uncordon.stdout)).toEqual({ node: 'Helius-1', cordoned: false });
    expect((await statusJson(demo.dir.dir)).nodes[0]!.state).not.toBe('cordoned');
  });

  it('refreshes with --watch', async () => {
    demo = await startDemo();
    const watch = await runCli(['status', '--watch', '--iterations', '2'], { cwd: demo.dir.dir });
    expect(watch.code).toBe(0);
    expect(watch.stdout.match(/│ Helius-1 /g)).toHaveLength(2);
  });

  it('exits 1 with one clear line when no server is reachable', async () => {
    empty = makeTempDir('cascade-no-server-');
    const none = await runCli(['status'], { cwd: empty.dir });
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(
      /^error: no running cascade server found \(no live lock next to .*quotas\.json, no config\)\nhint: start it with \[server\] admin_port set/,
    );
    const url = `http://127.0.0.1:${await freePort()}`;
    const gone = await runCli(['status', '--admin', url], { cwd: empty.dir });
    expect(gone.code).toBe(1);
    expect(gone.stderr.split('\n')[0]).toBe(
      `error: no cascade server answers at ${url} (connect ECONNREFUSED 127.0.0.1:${url.split(':')[2]})`,
    );
  });
});
