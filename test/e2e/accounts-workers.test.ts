/**
 * `cascade serve --workers 2` and a provider account on two chains (issue 28): the workers
 * share the account's pool (the primary's ledger) and split its rps_limit and max_concurrent
 * into shares like a node's, so the proxy holds one pool, one rate and one concurrency cap —
 * not one per worker — books exactly what the upstream saw, spills both chains once the pool
 * is spent, and a SIGHUP that raises the account's limit reaches every worker, pool kept.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CHAINS,
  PRICE,
  call,
  creditsOf,
  perChain,
  writeAccountChains,
  type Chain,
  type QuotasFile,
} from '../support/account-chains.js';
import { assertBuilt, startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { recordingUpstream, stopRecordingUpstreams } from '../support/recording-upstream.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { busiestWindow, ARRIVAL_WINDOW_MS } from '../support/arrivals.js';

let temp: TempDir | undefined;
let proxy: CliProcess | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  if (proxy && proxy.child.exitCode === null) await proxy.stop('SIGKILL');
  proxy = undefined;
  stopRecordingUpstreams();
  temp?.cleanup();
});

/** Where `count` calls to `chain`, each on a new connection (so on either worker), went. */
async function probe(url: string, chain: Chain, count: number): Promise<string[]> {
  const nodes: string[] = [];
  for (let i = 0; i < count; i++) nodes.push((await call(url, chain, 500 + i, true)).node);
  return nodes;
}

/** Starts `cascade serve --workers 2`; resolves with its URL once both workers serve. */
async function serveWorkers(
  premium: string,
  backup: string,
  account: (limit: number) => string,
  limit: number,
): Promise<{ url: string; write: (limit: number) => void }> {
  temp = makeTempDir('cascade-account-workers-');
  const port = await freePort();
  const write = (next: number): void =>
    writeAccountChains(temp!, 'config.toml', {
      server: `port = ${port}\nquota_flush_seconds = 1`,
      account: account(next),
      premium,
      backup,
    });
  write(limit);
  proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], { cwd: temp.dir });
  await proxy.waitFor(/workers share the port/);
  await expect.poll(() => proxy!.output().match(/"worker serving"/g)?.length ?? 0).toBe(2);
  return { url: `http://127.0.0.1:${port}`, write };
}

/** Sends `perTick` calls to each chain every 100 ms for `ticks`; their statuses. */
async function drive(url: string, perTick: number, ticks: number): Promise<number[]> {
  const sent: Array<Promise<{ status: number }>> = [];
  for (let tick = 0; tick < ticks; tick++) {
    for (let k = 0; k < perTick; k++)
      for (const chain of CHAINS) sent.push(call(url, chain, tick * 10 + k));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return (await Promise.all(sent)).map((answer) => answer.status);
}

describe('cascade serve --workers 2 with a provider account', { timeout: 240_000 }, () => {
  it('shares one pool and one rate between the workers, and a reload of them', async () => {
    // A pool of 90 credits and 10 calls a second, across both chains and both workers.
    const [N, R] = [90, 10];
    const [premium, backup] = [await recordingUpstream(), await recordingUpstream()];
    const { url, write } = await serveWorkers(
      premium.url,
      backup.url,
      (limit) => `monthly_limit = ${limit}\nspillover_percent = 100\nrps_limit = ${R}`,
      N,
    );
    // 80 calls a second asked (40 per chain) for 8 s: either worker alone would want more
    // than the account's rate and more than its pool.
    const statuses = await drive(url, 4, 80);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // Spent: both workers send both chains to their backups, once they have heard so.
    for (const chain of CHAINS)
      await expect.poll(() => probe(url, chain, 4)).toEqual(Array(4).fill(`${chain}-backup`));
    const { arrivals, paths } = await premium.report();
    const seen = perChain(paths);
    const booked = creditsOf(seen);
    // One pool, passed by at most the bound (a second of the account's calls at the dearest
    // price; the account has no max_concurrent); one pool per worker would book up to 2N.
    expect(booked).toBeGreaterThan(N);
    expect(booked).toBeLessThanOrEqual(N + R * PRICE.evm);
    // One rate: R a second plus one burst of R, in any second and over the whole run.
    expect(busiestWindow(arrivals, ARRIVAL_WINDOW_MS)).toBeLessThanOrEqual(R + R);
    const span = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
    expect(arrivals.length).toBeLessThanOrEqual(R * Math.ceil(span) + R);
    expect(seen.sol).toBeGreaterThan(0);
    expect(seen.evm).toBeGreaterThan(0);

    // SIGHUP with room for a few more calls: every worker takes the raised limit, the pool
    // is kept (the premium nodes serve again, then spill again once it is spent).
    write(booked + 6);
    proxy!.child.kill('SIGHUP');
    await proxy!.waitFor(/config reloaded/);
    for (const chain of CHAINS)
      await expect.poll(() => probe(url, chain, 4)).toEqual(Array(4).fill(`${chain}-backup`));
    const after = perChain((await premium.report()).paths);
    const rebooked = creditsOf(after);
    expect(rebooked).toBeGreaterThan(booked + 6);
    expect(rebooked).toBeLessThanOrEqual(booked + 6 + R * PRICE.evm);

    // Exactly what the upstream saw, in the pool and per node.
    expect(await proxy!.stop('SIGTERM')).toBe(0);
    const file = JSON.parse(readFileSync(temp!.path('quotas.json'), 'utf8')) as QuotasFile;
    expect(file['account:shared']!.used).toBe(rebooked);
    expect(file['sol-prem']!.used).toBe(after.sol * PRICE.sol);
    expect(file['evm-prem']!.used).toBe(after.evm * PRICE.evm);
  });

  it('shares one concurrency cap between the workers, across both chains', async () => {
    const C = 2;
    // Slow answers (200 ms): 80 calls a second would keep 16 in flight without the cap.
    const [premium, backup] = [await recordingUpstream(200), await recordingUpstream()];
    const { url } = await serveWorkers(
      premium.url,
      backup.url,
      () => `monthly_limit = 0\nmax_concurrent = ${C}`,
      0,
    );
    const statuses = await drive(url, 4, 30);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    const { paths, peak } = await premium.report();
    const seen = perChain(paths);
    // Both chains' premium nodes served, never more than C at once between them; one cap per
    // worker would allow 2C.
    expect(seen.sol).toBeGreaterThan(0);
    expect(seen.evm).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(C);
    expect(await proxy!.stop('SIGTERM')).toBe(0);
  });
});
