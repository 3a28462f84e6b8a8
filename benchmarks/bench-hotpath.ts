/**
 * The hot-path benchmark: the same load through the mock nodes directly, the bare reference
 * proxy (benchmarks/reference-proxy.ts), cascade (metrics on, config/balancer_config/hotpath.toml),
 * the same cascade with a client key in the path (hotpath-keyed.ts) and nginx (when installed),
 * in one run of about two and a half minutes. Run from the repository root:
 *
 *     npm run bench:hotpath [-- --duration 5 --cpu-windows 15 --warm-up 2 --crowd-warm-up 3 --rate 2000
 *                              --no-wrk --no-nginx]
 *     npm run bench:hotpath -- --profile /tmp/prof   # reference, cascade, keyed under (a), --cpu-prof
 *
 * Scenarios (hotpath-runner.ts measures them in interleaved 1 s windows: --cpu-windows of them
 * per target in (a), --duration in (b) and (c); (d) is one window of --duration seconds):
 *   (a) 50 connections closed loop, mock delay 0 → req/s, p50/p99, proxy CPU µs/request
 *       (/proc/<pid>/stat utime+stime), peak RSS (VmHWM)
 *   (b) 1 connection closed loop → p50/p99 and the latency added over direct
 *   (c) open loop at a fixed rate (2,000 req/s) → added p50/p99 over direct
 *   (d) 200 connections, mock delay 5 ms → p99 and peak RSS
 * Placement on a machine with ≥ 2 CPUs and taskset: this process, the load generator and the
 * mock nodes on CPU 0; the proxies under test on CPU 1. Writes results/hotpath.json and
 * results/hotpath.md; the built dist/ is copied first, so a rebuild during the run changes
 * nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startMockProcess, type MockProcess } from '../src/mock/index.js';
import { clockTicks } from '../src/bench/process-stats.js';
import { resultsTable, targetsTable } from './hotpath-report.js';
import { TARGET_NAMES, checkTargets, derive, type Results } from './hotpath-results.js';
import { BODY, placeProcesses, toolVersion } from './hotpath-placement.js';
import { profileHotpath } from './hotpath-profile.js';
import { writeKeyedConfig } from './hotpath-keyed.js';
import { CROWD_DELAY_MS, HotpathRunner, type RunnerOptions } from './hotpath-runner.js';
import {
  hotpathNodeCount,
  nginxVersion,
  REFERENCE_PROXY,
  snapshotDist,
  writeCascadeConfig,
  type TargetSetup,
} from './hotpath-targets.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Above this share of the proxy CPU used by others in a window, the report says so. */
const NOISE_WARNING = 0.1;

interface Options extends Omit<RunnerOptions, 'proxyCpu' | 'body'> {
  readonly profileDir: string | undefined;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      'cpu-windows': { type: 'string', default: '15' },
      'warm-up': { type: 'string', default: '2' },
      'crowd-warm-up': { type: 'string', default: '3' },
      rate: { type: 'string', default: '2000' },
      'no-wrk': { type: 'boolean', default: false },
      'no-nginx': { type: 'boolean', default: false },
      profile: { type: 'string' },
    },
  });
  // Windows are whole seconds (wrk's -d takes no fractions), and counted in whole windows.
  const whole = (flag: string, value: string, what: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`--${flag} ${value}: ${what}`);
    return n;
  };
  const seconds = (flag: string, value: string): number => whole(flag, value, 'whole seconds ≥ 1');
  const rate = Number(values.rate);
  if (!Number.isFinite(rate) || rate <= 0) throw new RangeError(`--rate ${values.rate}: > 0`);
  return {
    durationS: seconds('duration', values.duration),
    cpuWindows: whole(
      'cpu-windows',
      values['cpu-windows'],
      'a whole number of windows ≥ 1 (e.g. 15)',
    ),
    warmUpS: seconds('warm-up', values['warm-up']),
    crowdWarmUpS: seconds('crowd-warm-up', values['crowd-warm-up']),
    rate,
    useWrk: !values['no-wrk'] && toolVersion('wrk', ['-v']) !== undefined,
    useNginx: !values['no-nginx'] && nginxVersion() !== undefined,
    profileDir: values.profile,
  };
}

/** The commit benchmarked and whether src/ had uncommitted changes (read-only git calls). */
function revision(): { commit: string | null; src_modified: boolean | null } {
  const git = (args: string[]) => spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  const head = git(['rev-parse', '--short', 'HEAD']);
  if (head.error || head.status !== 0) return { commit: null, src_modified: null };
  const status = git(['status', '--porcelain', '--', 'src']);
  return { commit: head.stdout.trim(), src_modified: status.stdout.trim() !== '' };
}

function machine(placement: string, opts: Options) {
  return {
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    wrk: opts.useWrk ? (toolVersion('wrk', ['-v']) ?? null) : null,
    nginx: opts.useNginx ? (nginxVersion() ?? null) : null,
    clk_tck: clockTicks(),
    load_average_at_start: os.loadavg(),
    placement,
  };
}

type Machine = ReturnType<typeof machine>;

function noisiest(results: Results): number {
  let max = 0;
  for (const name of TARGET_NAMES) {
    const r = results[name];
    for (const s of r ? [r.throughput, r.oneConnection, r.fixedRate, r.crowd] : []) {
      max = Math.max(max, s?.noise?.median ?? 0);
    }
  }
  return max;
}

function report(results: Results, opts: Options, info: Machine, elapsedS: number): string {
  const derived = derive(results);
  const checks = checkTargets(results, derived);
  const date = new Date().toISOString();
  const rev = revision();
  const tool = opts.useWrk ? `wrk (${info.wrk})` : 'autocannon';
  const noise = noisiest(results);
  const md = [
    '# Hot-path benchmark',
    '',
    `${date} — \`npm run bench:hotpath\` (${elapsedS.toFixed(0)} s), commit ` +
      `${rev.commit ?? 'unknown'}${rev.src_modified ? ' with uncommitted src/ changes' : ''}.`,
    '',
    `${info.nproc} × ${info.cpu}, Node ${info.node}, ${info.kernel}; ${info.placement}. ` +
      `Closed loop: ${tool}; fixed rate: open-loop undici client (1 ms ticks). Each figure is ` +
      `the median of ${opts.durationS} interleaved 1 s windows per target ` +
      `(${opts.cpuWindows} in (a); (d) is one ${opts.durationS} s window per target), ` +
      `range in brackets, after ${opts.warmUpS} s of warm-up per target ` +
      `(${opts.crowdWarmUpS} s before (d)). Body: getBalance in the member order viem, ethers, ` +
      `kit and curl send it (${BODY.length} B). cascade: config/balancer_config/hotpath.toml ` +
      `(6 mocks in 3 tiers, real price lists, metered, metrics on); keyed: the same cascade ` +
      `with require_key and one ` +
      `[[keys]] entry, the key in the URL path; reference and nginx round-robin over the tier-0 ` +
      `mocks cascade uses; direct = one mock.`,
    '',
    ...(noise > NOISE_WARNING
      ? [
          `> **Noisy machine:** other processes used a median of up to ${Math.round(noise * 100)}% ` +
            `of the proxy CPU in a scenario (last row); compare runs before trusting a ratio.`,
          '',
        ]
      : []),
    '## Targets (issue "Performance")',
    '',
    targetsTable(checks, results, derived),
    '',
    '## Measurements',
    '',
    resultsTable(results, derived, opts.rate),
    '',
    'CPU per request: utime + stime of the proxy process(es) in a window / answers in it ' +
      '(nginx: master + worker). Peak RSS: VmHWM of processes started fresh for the phase. ' +
      '"added": the target minus direct, median against median.',
    '',
  ].join('\n');
  const json = {
    date,
    command: 'npm run bench:hotpath',
    elapsed_s: Number(elapsedS.toFixed(1)),
    revision: rev,
    machine: info,
    setup: {
      body: BODY,
      duration_s: opts.durationS,
      cpu_windows: opts.cpuWindows,
      window_s: 1,
      warm_up_s: opts.warmUpS,
      crowd_warm_up_s: opts.crowdWarmUpS,
      fixed_rate: opts.rate,
      crowd_delay_ms: CROWD_DELAY_MS,
      closed_loop_tool: opts.useWrk ? 'wrk' : 'autocannon',
      fixed_rate_tool: 'open-loop undici client, 1 ms ticks, up to 64 connections',
      cascade_config: 'config/balancer_config/hotpath.toml',
      keyed_config: 'hotpath.toml + require_key + one [[keys]] entry, key in the URL path',
    },
    targets: checks,
    derived,
    results,
  };
  const dir = path.join(REPO_ROOT, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'hotpath.json'), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(path.join(dir, 'hotpath.md'), md);
  return md;
}

async function main(): Promise<void> {
  const opts = options();
  for (const file of ['dist/cli.js', REFERENCE_PROXY]) {
    if (!existsSync(path.join(REPO_ROOT, file))) {
      throw new Error(
        `${file} is missing: build with \`npm run bench:hotpath\` (or \`npm run build && tsc -p tsconfig.benchmarks.json\`)`,
      );
    }
  }
  const info = machine('', opts);
  const { pin, proxyCpu, placement } = placeProcesses();
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'cascade-hotpath-'));
  let mocks: MockProcess | undefined;
  try {
    const runRoot = snapshotDist(REPO_ROOT, tmpDir);
    const setup: TargetSetup = { repoRoot: REPO_ROOT, runRoot, tmpDir, pin };
    const names = Array.from({ length: hotpathNodeCount(REPO_ROOT) }, (_, i) => ({
      name: `hotpath-${i + 1}`,
    }));
    mocks = await startMockProcess(names);
    const started = performance.now();
    const config = writeCascadeConfig(
      setup,
      mocks.nodes.map((node) => node.url),
    );
    const runner = new HotpathRunner(
      { ...opts, body: BODY, proxyCpu },
      mocks,
      config.file,
      config.firstTier,
      setup,
      writeKeyedConfig(setup, config.file),
    );
    const log = (text: string) => process.stdout.write(`${text}\n`);
    log(`${placement}; closed loop on ${opts.useWrk ? 'wrk' : 'autocannon'}`);
    if (opts.profileDir !== undefined) {
      log(await profileHotpath(runner, path.resolve(opts.profileDir)));
      return;
    }
    const results = await runner.run(log);
    const md = report(results, opts, { ...info, placement }, (performance.now() - started) / 1000);
    log(`\n${md}\n→ results/hotpath.json, results/hotpath.md`);
  } finally {
    await mocks?.close();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

await main();
