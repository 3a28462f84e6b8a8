/**
 * A provider account shared by two chains, served by the built CLI (issue 28): one pool under
 * concurrent load on both chains — booked at most one call's price past its threshold, both
 * chains spilling to their backups, exactly what the upstream saw — kept in quotas.json
 * beside each node across a restart (a file written before accounts read unchanged), and
 * across `kill -9` racing the flush: never backwards, never below what a completed flush
 * recorded, always the sum of its nodes' entries.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseQuotaFile } from '../../src/core/quota/quota-format.js';
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
import { recordingUpstream, stopRecordingUpstreams } from '../support/recording-upstream.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';

let temp: TempDir | undefined;
let running: CliProcess | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  if (running && running.child.exitCode === null && !running.child.signalCode)
    await running.stop('SIGKILL');
  running = undefined;
  stopRecordingUpstreams();
  temp?.cleanup();
});

async function serve(): Promise<string> {
  running = startCli(['serve', '--config', 'config.toml'], { cwd: temp!.dir });
  return (JSON.parse(await running.waitFor(/cascade serving/)) as { url: string }).url;
}

const quotas = (): QuotasFile =>
  JSON.parse(readFileSync(temp!.path('quotas.json'), 'utf8')) as QuotasFile;

/** The UTC day the current period (reset day 1) began, as quotas.json writes it. */
function periodStart(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

describe('a provider account shared by two chains (cascade serve)', () => {
  it('books one pool under concurrent load on both, spills both, and keeps it across a restart', async () => {
    temp = makeTempDir('cascade-accounts-');
    const [premium, backup] = [await recordingUpstream(), await recordingUpstream()];
    writeAccountChains(temp, 'config.toml', {
      server: 'port = 0',
      account: 'monthly_limit = 60\nspillover_percent = 100',
      premium: premium.url,
      backup: backup.url,
    });
    // A file from before accounts: node entries only. Read as it is; the pool starts at 0.
    writeFileSync(
      temp.path('quotas.json'),
      JSON.stringify({ 'sol-prem': { used: 4, period_start: periodStart() } }),
    );
    let url = await serve();
    // 40 calls on each chain at once: 120 credits asked of a pool of 60.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => CHAINS.map((chain) => call(url, chain, i))).flat(),
    );
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    const seen = perChain((await premium.report()).paths);
    const spilled = perChain((await backup.report()).paths);
    expect(seen.sol + spilled.sol).toBe(40);
    expect(seen.evm + spilled.evm).toBe(40);
    // Both chains' premium nodes drew from the pool, which passed its threshold by less than
    // one call's price (one process books before it sends).
    expect(seen.sol).toBeGreaterThan(0);
    expect(seen.evm).toBeGreaterThan(0);
    const booked = creditsOf(seen);
    expect(booked).toBeGreaterThan(60);
    expect(booked).toBeLessThanOrEqual(60 + PRICE.evm);
    expect(await running!.stop('SIGTERM')).toBe(0);
    const first = quotas();
    // Exactly what the upstream saw, per node and in the pool; the old entry kept its usage.
    expect(first['account:shared']).toEqual({ used: booked, period_start: periodStart() });
    expect(first['sol-prem']!.used).toBe(4 + seen.sol * PRICE.sol);
    expect(first['evm-prem']!.used).toBe(seen.evm * PRICE.evm);

    // Restarted from the file: still past its threshold, so both chains go to their backups.
    url = await serve();
    for (const chain of CHAINS)
      expect(await call(url, chain, 99)).toEqual({
        status: 200,
        node: `${chain}-backup`,
      });
    expect(perChain((await premium.report()).paths)).toEqual(seen);
    expect(await running!.stop('SIGTERM')).toBe(0);
    expect(quotas()['account:shared']).toEqual(first['account:shared']);
  });

  it('never loses a flushed booking, nor goes backwards, under kill -9 racing the flush', async () => {
    temp = makeTempDir('cascade-accounts-kill-');
    const [premium, backup] = [await recordingUpstream(), await recordingUpstream()];
    writeAccountChains(temp, 'config.toml', {
      server: 'port = 0\nquota_flush_seconds = 1',
      account: 'monthly_limit = 0',
      premium: premium.url,
      backup: backup.url,
    });
    const file = temp.path('quotas.json');
    const saw = async () => creditsOf(perChain((await premium.report()).paths));
    let previous = 0;
    for (let round = 0; round < 4; round++) {
      const url = await serve();
      // The pool restored from the file, and what the upstream had seen when it started.
      const [base, before] = [previous, await saw()];
      const sent = async () => (await saw()) - before;
      // Load on both chains; paused, the upstream has seen exactly what was booked.
      const load = loadBoth(url);
      await until(async () => (await sent()) >= 40);
      await load.pause();
      const checkpoint = base + (await sent());
      // The event: a flush wrote the checkpoint (the whole pool, nothing in flight).
      await until(() => Promise.resolve(poolIn(file) === checkpoint));
      load.resume();
      await until(async () => base + (await sent()) >= checkpoint + 10);
      // Kill at a different point of the 1 s flush cycle each round.
      await new Promise((resolve) => setTimeout(resolve, round * 230));
      running!.child.kill('SIGKILL');
      await running!.exited();
      await load.stop();
      const written = parseQuotaFile(readFileSync(file, 'utf8'), file);
      const pool = written.get('account:shared')!.used;
      const nodes = written.get('sol-prem')!.used + written.get('evm-prem')!.used;
      // What a completed flush recorded is never lost, and the pool never goes backwards;
      // what was booked after the last flush (at most one flush interval) may be.
      expect({ round, kept: pool >= checkpoint }).toEqual({ round, kept: true });
      // Every write holds one consistent snapshot: the pool is the sum of its nodes' usage,
      // and never more than the upstream saw plus the calls in flight (4 clients).
      expect(pool).toBe(nodes);
      expect(pool - base).toBeLessThanOrEqual((await sent()) + 4 * PRICE.evm);
      previous = pool;
    }
    // The last file read back: a restart serves on from it.
    const url = await serve();
    expect((await call(url, 'evm', 1)).node).toBe('evm-prem');
    expect(await running!.stop('SIGTERM')).toBe(0);
    expect(poolIn(file)).toBe(previous + PRICE.evm);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

function poolIn(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  return parseQuotaFile(readFileSync(file, 'utf8'), file).get('account:shared')?.used;
}

async function until(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('gave up waiting');
}

/** Two clients per chain posting back to back; pausable; they end when the server dies. */
function loadBoth(url: string): {
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
} {
  let state: 'run' | 'pause' | 'stop' = 'run';
  /** Where paused clients wait; opened by resume and stop. */
  let gate: { readonly closed: Promise<void>; readonly open: () => void } | undefined;
  const idle = new Set<number>();
  const loop = async (chain: Chain, n: number): Promise<void> => {
    for (let id = 0; state !== 'stop'; id++) {
      if (state === 'pause' && gate) {
        idle.add(n);
        await gate.closed;
        idle.delete(n);
        continue;
      }
      if ((await call(url, chain, id)).status === 0) return; // the server was killed
    }
  };
  const loops = [0, 1, 2, 3].map((n) => loop(CHAINS[n % 2]!, n));
  return {
    async pause() {
      let open: () => void = () => undefined;
      const closed = new Promise<void>((resolve) => (open = resolve));
      gate = { closed, open };
      state = 'pause';
      await until(() => Promise.resolve(idle.size === loops.length));
    },
    resume() {
      state = 'run';
      gate?.open();
    },
    async stop() {
      state = 'stop';
      gate?.open();
      await Promise.all(loops);
    },
  };
}
