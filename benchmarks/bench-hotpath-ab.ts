/**
 * Before/after for the request path: this checkout's cascade against another built checkout's
 * (a commit before a change), with the bare reference proxy as the yardstick, all three started
 * at once and measured in many interleaved 1 s windows of the hot-path benchmark's scenario (a)
 * (50 connections, closed loop, mock delay 0). Both cascades read their own checkout's
 * config/balancer_config/hotpath.toml and price lists, so an older commit runs with the config
 * it understands. Interleaving cancels most of a shared machine's drift; the medians of the
 * per-round ratios are what to compare.
 *
 *     git worktree add ../before <commit> && (cd ../before && npm ci && npm run build)
 *     npm run bench:hotpath-ab -- --other ../before [--rounds 60] [--warm-up 3] [--profile DIR]
 *                                 [--config benchmarks/user-view.toml] [--window 1]
 *
 * On a shared VM single 1 s windows vary by ±30% or more; 60 rounds (about 4 minutes) resolve
 * a difference of a few percent. `--profile DIR` writes a .cpuprofile of each cascade (read
 * them with hotpath-cpuprofile.js). `--config FILE` runs both cascades with that one config
 * instead of their own hotpath.toml — e.g. benchmarks/user-view.toml, the set-up users measure
 * with (three nodes with limits set, metrics on, cache and coalescing off). `--keyed` runs this
 * checkout's cascade with a client key (hotpath-keyed.ts: require_key, one [[keys]] entry, the
 * key in the URL path): `--other . --keyed` is then keyed against plain, same build. `--window S`
 * measures S-second windows instead of 1 s ones (each window is one wrk run with fresh
 * connections): fewer, longer windows come closer to a user's single long wrk run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startMockProcess, type MockProcess } from '../src/mock/index.js';
import { readProcesses } from '../src/bench/process-stats.js';
import { BODY, placeProcesses, toolVersion } from './hotpath-placement.js';
import { runAutocannon, type LoadResult } from './hotpath-load.js';
import { keyedUrl, writeKeyedConfig } from './hotpath-keyed.js';
import { runWrk, writeWrkScript } from './hotpath-wrk.js';
import {
  hotpathNodeCount,
  snapshotCli,
  snapshotDist,
  startCascade,
  startReference,
  writeCascadeConfig,
  type Target,
  type TargetSetup,
} from './hotpath-targets.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** One target's reading of one window. */
interface Window {
  /** CPU of its process(es) over the window, µs. */
  readonly cpu: number;
  readonly answers: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      other: { type: 'string' },
      rounds: { type: 'string', default: '60' },
      window: { type: 'string', default: '1' },
      'warm-up': { type: 'string', default: '3' },
      profile: { type: 'string' },
      config: { type: 'string' },
      keyed: { type: 'boolean', default: false },
    },
  });
  if (values.other === undefined) throw new Error('--other DIR: the checkout to compare with');
  const other = path.resolve(values.other);
  const rounds = Number(values.rounds);
  const warmUp = Number(values['warm-up']);
  const window = Number(values.window);
  if (!Number.isInteger(window) || window < 1)
    throw new Error(`--window ${values.window}: a whole number of seconds, 1 or more`);
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'cascade-ab-'));
  const prefix = placeProcesses().pin;
  const wrk = toolVersion('wrk', ['-v']) !== undefined;
  const script = wrk ? writeWrkScript(tmpDir, BODY) : undefined;
  const load = (url: string, seconds: number): Promise<LoadResult> => {
    const spec = { url, body: BODY, connections: 50, durationS: seconds };
    return script ? runWrk(spec, script) : runAutocannon(spec);
  };
  let mocks: MockProcess | undefined;
  const targets = new Map<string, Target>();
  try {
    const setups = (['this', 'other'] as const).map((name) => ({
      name,
      root: name === 'this' ? REPO_ROOT : other,
      dir: path.join(tmpDir, name),
    }));
    const shared = values.config === undefined ? undefined : path.resolve(values.config);
    const nodes = hotpathNodeCount(REPO_ROOT, shared);
    mocks = await startMockProcess(
      Array.from({ length: nodes }, (_, i) => ({ name: `hotpath-${i + 1}` })),
    );
    const urls = mocks.nodes.map((node) => node.url);
    for (const { name, root, dir } of setups) {
      const runRoot = name === 'this' ? snapshotDist(root, dir) : snapshotCli(root, dir);
      const setup: TargetSetup = { repoRoot: root, runRoot, tmpDir: dir, pin: prefix };
      const config = writeCascadeConfig(setup, urls, shared);
      const profDir = values.profile && path.resolve(values.profile, name);
      const nodeArgs = profDir
        ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=100']
        : [];
      const keyed = name === 'this' && values.keyed;
      const file = keyed ? writeKeyedConfig(setup, config.file) : config.file;
      const target = await startCascade(setup, file, nodeArgs);
      targets.set(name, keyed ? { ...target, url: keyedUrl(target.url) } : target);
      if (name === 'this') {
        targets.set('reference', await startReference(setup, config.firstTier));
      }
    }
    for (const target of targets.values()) await load(target.url, warmUp);
    // Each target's windows, in round order: the CPU it used and the answers it gave.
    const windows = new Map<string, Window[]>([...targets.keys()].map((k) => [k, []]));
    for (let round = 0; round < rounds; round++) {
      for (const [name, target] of targets) {
        const pids = target.pids();
        const before = readProcesses(pids)!.cpuMicros;
        const result = await load(target.url, window);
        const after = readProcesses(pids)!.cpuMicros;
        windows.get(name)!.push({ cpu: after - before, answers: result.requests });
      }
      process.stdout.write('.');
    }
    process.stdout.write('\n');
    // A window in which a proxy served nothing (starved by other processes on a shared VM), or
    // used no measurable CPU, has no CPU per request: every target's reading of that round is
    // dropped, and counted.
    const kept = Array.from({ length: rounds }, (_, i) => i).filter((i) =>
      [...windows.values()].every((w) => w[i]!.answers > 0 && w[i]!.cpu > 0),
    );
    const perRequest = new Map(
      [...windows].map(([name, w]) => [name, kept.map((i) => w[i]!.cpu / w[i]!.answers)]),
    );
    const ref = perRequest.get('reference')!;
    const line = (name: string): string => {
      const cpu = perRequest.get(name)!;
      const ratios = cpu.map((v, i) => v / ref[i]!);
      return `${name.padEnd(9)} ${median(cpu).toFixed(1)} µs/request, vs reference ${median(ratios).toFixed(3)}× (per-round ratios ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
    };
    // What one long run would read: all the CPU over all the answers of the windows kept.
    const total = (name: string): number => {
      const w = windows.get(name)!;
      return (
        kept.reduce((sum, i) => sum + w[i]!.cpu, 0) /
        kept.reduce((sum, i) => sum + w[i]!.answers, 0)
      );
    };
    const totals = ['this', 'other']
      .map((name) => `${name} ${(total(name) / total('reference')).toFixed(3)}×`)
      .join(', ');
    const served = [...windows].map(
      ([name, w]) => `${name} ${w.reduce((sum, one) => sum + one.answers, 0)}`,
    );
    const mine = perRequest.get('this')!;
    const theirs = perRequest.get('other')!;
    const ab = median(mine.map((v, i) => v / theirs[i]!));
    process.stdout.write(
      [
        `${rounds} rounds of ${window} s, 50 connections, ${wrk ? 'wrk' : 'autocannon'}; this = ${REPO_ROOT}${values.keyed ? ' (keyed)' : ''}, other = ${other}`,
        ...(kept.length < rounds
          ? [`${rounds - kept.length} rounds dropped: a target served nothing`]
          : []),
        line('reference'),
        line('this'),
        line('other'),
        `this / other: ${ab.toFixed(3)}× (median of per-round ratios)`,
        `all windows' CPU over all their answers, vs reference: ${totals}`,
        `requests served in rounds: ${served.join(', ')}`,
        '',
      ].join('\n'),
    );
  } finally {
    for (const target of targets.values()) await target.stop();
    await mocks?.close();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

await main();
