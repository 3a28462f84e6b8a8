/**
 * What several workers and shared limits through Redis cost and give (issue 17, Performance).
 * Two parts; load from anything else on the machine must hit the variants compared alike:
 *
 * - workers: `cascade serve --workers 2` vs one process, closed loop (wrk, 50 connections),
 *   alternating window by window (A, B, A, B, …; side by side they would fight for the cores):
 *   req/s, latency, and the CPU per request of the proxy (primary + workers);
 * - redis: one process with `[cluster] redis_url` vs one without, side by side in the same
 *   windows (each its own client at the same fixed rate, which starts first alternating), with
 *   no traffic and at two rates: CPU per request of each proxy, and Redis commands
 *   (`CONFIG RESETSTAT` before a window, `INFO commandstats` after) per request and per
 *   second, to show they do not follow traffic.
 *
 * Load generator, mock nodes, Redis and proxy share this machine's cores: the report says how
 * many and how busy they were. Writes results/cluster.json and .md. Linux only (/proc). Run
 * from the repository root:
 *
 *     npm run bench:cluster [-- --part workers|redis|all --seconds 2 --rounds 3 --rates 300,1500]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCpuBusy } from '../src/bench/process-stats.js';
import { startMockProcess, type MockProcess } from '../src/mock/index.js';
import {
  runSeconds,
  startRedis,
  startVariant,
  type BenchCascade,
  type CommandCalls,
} from './cluster-harness.js';
import {
  markdown,
  type ClusterResults,
  type RedisWindow,
  type WorkersWindow,
} from './cluster-report.js';
import { LoadClient } from './hotpath-load-client.js';
import { runWrk, writeWrkScript } from './hotpath-wrk.js';

const REPO_ROOT = path.resolve('.');
const BODY =
  '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}';
const CONNECTIONS = 50;
/** What cascade sends to Redis itself; every other command runs inside its sync script. */
const ROUND_TRIPS = new Set(['eval', 'evalsha', 'hello', 'ping', 'client|setinfo', 'script|load']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Busy CPU seconds of the whole machine (every core), from /proc/stat. */
function machineBusy(): number {
  let total = 0;
  for (let cpu = 0; cpu < os.availableParallelism(); cpu++)
    total += (readCpuBusy(cpu) ?? NaN) / 1e6;
  return total;
}

/** What one window measured: CPU seconds of each proxy, of the mocks, of the machine; wall. */
interface Metered<T> {
  readonly result: T;
  readonly proxyCpu: readonly number[];
  readonly mocksCpu: number;
  readonly machineCpu: number;
  readonly wall: number;
}

/** CPU seconds of `proxies` (each), of the mocks and of the machine over `run`. */
async function metered<T>(
  proxies: readonly BenchCascade[],
  mocks: MockProcess,
  run: () => Promise<T>,
): Promise<Metered<T>> {
  const cpu = () => proxies.map((p) => p.cpuSeconds());
  const before = { proxies: cpu(), mocks: runSeconds(mocks.pid), machine: machineBusy() };
  const start = performance.now();
  const result = await run();
  // The proxy's last writes may be accounted a moment after the client has its answers.
  await sleep(20);
  const after = cpu();
  return {
    result,
    proxyCpu: after.map((seconds, i) => seconds - before.proxies[i]!),
    mocksCpu: runSeconds(mocks.pid) - before.mocks,
    machineCpu: machineBusy() - before.machine,
    wall: (performance.now() - start) / 1000,
  };
}

async function workersPart(
  dir: string,
  mocks: MockProcess,
  seconds: number,
  rounds: number,
): Promise<WorkersWindow[]> {
  const script = writeWrkScript(dir, BODY);
  const variants = [
    await startVariant(
      dir,
      REPO_ROOT,
      mocks.nodes.map((node) => node.url),
      { name: 'workers-1', workers: 1 },
    ),
    await startVariant(
      dir,
      REPO_ROOT,
      mocks.nodes.map((node) => node.url),
      { name: 'workers-2', workers: 2 },
    ),
  ];
  const windows: WorkersWindow[] = [];
  try {
    // Warm-up: the JIT compiles the hot path in the first seconds of traffic.
    for (const proxy of variants) {
      await runWrk({ url: proxy.url, body: BODY, connections: CONNECTIONS, durationS: 2 }, script);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const proxy of variants) {
        const spec = { url: proxy.url, body: BODY, connections: CONNECTIONS, durationS: seconds };
        const m = await metered([proxy], mocks, () => runWrk(spec, script));
        const load = m.result;
        windows.push({
          variant: proxy.variant.name,
          round,
          rps: load.rps,
          p50Us: load.p50Us,
          p99Us: load.p99Us,
          errors: load.errors,
          proxyCpuUsPerRequest: (m.proxyCpu[0]! * 1e6) / load.requests,
          proxyCores: m.proxyCpu[0]! / m.wall,
          mocksCores: m.mocksCpu / m.wall,
          machineCores: m.machineCpu / m.wall,
        });
        process.stdout.write(
          `workers: ${proxy.variant.name} round ${round}: ${Math.round(load.rps)} req/s\n`,
        );
      }
    }
  } finally {
    await Promise.all(variants.map((v) => v.stop()));
  }
  return windows;
}

/** Calls that were round trips from cascade, and calls made inside its scripts. */
function split(calls: CommandCalls): { roundTrips: number; inScript: number } {
  let roundTrips = 0;
  let inScript = 0;
  for (const [name, count] of Object.entries(calls)) {
    if (ROUND_TRIPS.has(name)) roundTrips += count;
    else inScript += count;
  }
  return { roundTrips, inScript };
}

async function redisPart(
  dir: string,
  mocks: MockProcess,
  seconds: number,
  rounds: number,
  rates: readonly number[],
): Promise<{ windows: RedisWindow[]; redisVersion: string }> {
  const redis = await startRedis();
  const variants = [
    await startVariant(
      dir,
      REPO_ROOT,
      mocks.nodes.map((node) => node.url),
      { name: 'single', workers: 1 },
    ),
    await startVariant(
      dir,
      REPO_ROOT,
      mocks.nodes.map((node) => node.url),
      {
        name: 'redis',
        workers: 1,
        redisUrl: redis.url,
      },
    ),
  ];
  const clients = variants.map((v) => new LoadClient(v.url, BODY, 20));
  const windows: RedisWindow[] = [];
  const record = (
    i: number,
    round: number,
    rate: number,
    m: Metered<readonly number[]>,
    calls: CommandCalls | undefined,
  ): void => {
    const requests = m.result[i]!;
    const cpu = m.proxyCpu[i]!;
    const { roundTrips, inScript } = calls ? split(calls) : { roundTrips: NaN, inScript: NaN };
    windows.push({
      variant: variants[i]!.variant.name,
      round,
      rate,
      requests,
      wallSeconds: m.wall,
      proxyCpuUsPerRequest: requests > 0 ? (cpu * 1e6) / requests : NaN,
      proxyCores: cpu / m.wall,
      machineCores: m.machineCpu / m.wall,
      redisRoundTripsPerSecond: roundTrips / m.wall,
      redisCommandsInScriptPerSecond: inScript / m.wall,
      redisRoundTripsPerRequest: requests > 0 ? roundTrips / requests : NaN,
      redisCalls: calls,
    });
  };
  /** Both variants in the same window, at `rate` each (0: no traffic). */
  const window = async (round: number, rate: number): Promise<void> => {
    redis.resetStats();
    // Which client starts first alternates by round (A, B then B, A).
    const order = round % 2 === 1 ? [0, 1] : [1, 0];
    const m = await metered(variants, mocks, async () => {
      if (rate === 0) {
        await sleep(seconds * 1000);
        return [0, 0];
      }
      const loads: number[] = [];
      await Promise.all(
        order.map(async (i) => {
          const load = await clients[i]!.fixedRate(rate, seconds);
          if (load.errors > 0)
            throw new Error(`${variants[i]!.variant.name}: ${load.errors} errors`);
          loads[i] = load.requests;
        }),
      );
      return loads;
    });
    const calls = redis.commandCalls();
    record(0, round, rate, m, undefined);
    record(1, round, rate, m, calls);
    process.stdout.write(`redis: ${rate}/s round ${round}: done\n`);
  };
  try {
    // Warm-up: the JIT compiles the hot path in the first seconds of traffic. At the low rate,
    // so that no backlog is left to spill into the windows with no traffic that come next.
    await Promise.all(clients.map((client) => client.fixedRate(rates[0]!, 3, false)));
    await sleep(1000);
    for (const rate of [0, ...rates]) {
      for (let round = 1; round <= rounds; round++) await window(round, rate);
    }
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await Promise.all(variants.map((v) => v.stop()));
    await redis.stop();
  }
  return { windows, redisVersion: redis.version };
}

/** The 1-minute load average. */
const loadAverage = (): number => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

function machine(): ClusterResults['machine'] {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
  let wrk = 'unknown';
  try {
    execFileSync('wrk', ['-v'], { encoding: 'utf8' });
  } catch (err) {
    // wrk -v prints its version and exits 1.
    wrk = String((err as { stdout?: string }).stdout ?? '').split('\n')[0] ?? wrk;
  }
  return {
    nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
    cpuModel: model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    wrk,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      part: { type: 'string', default: 'all' },
      seconds: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '3' },
      rates: { type: 'string', default: '300,1500' },
    },
  });
  const part = values.part;
  if (!['workers', 'redis', 'all'].includes(part)) {
    throw new RangeError(`--part ${part}: workers, redis or all`);
  }
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const rates = values.rates.split(',').map(Number);
  if (!(seconds >= 1 && seconds <= 10)) throw new RangeError(`--seconds ${values.seconds}: 1–10`);
  if (!(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10)) {
    throw new RangeError(`--rounds ${values.rounds}: a whole number 1–10`);
  }
  if (rates.length !== 2 || rates.some((r) => !(r > 0 && r <= 20_000)) || rates[0]! >= rates[1]!) {
    throw new RangeError(`--rates ${values.rates}: two rates, low,high, each 1–20000 req/s`);
  }
  const out = path.join(REPO_ROOT, 'results');
  const jsonFile = path.join(out, 'cluster.json');
  let previous: Partial<ClusterResults> = {};
  try {
    previous = JSON.parse(readFileSync(jsonFile, 'utf8')) as ClusterResults;
  } catch {
    // First run: nothing to keep.
  }
  const started = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cascade-bench-cluster-'));
  const mocks = await startMockProcess([{ name: 'hotpath-1' }, { name: 'hotpath-2' }]);
  await mocks.setBehaviour({ delayMs: 0, jitterMs: 0 });
  const results: ClusterResults = {
    date: new Date().toISOString(),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
    machine: machine(),
    options: { seconds, rounds, rates, connections: CONNECTIONS },
    loadAverage: { before: loadAverage(), after: NaN },
    workers: previous.workers,
    redis: previous.redis,
    redisVersion: previous.redisVersion,
  };
  try {
    if (part !== 'redis') results.workers = await workersPart(dir, mocks, seconds, rounds);
    if (part !== 'workers') {
      const { windows, redisVersion } = await redisPart(dir, mocks, seconds, rounds, rates);
      results.redis = windows;
      results.redisVersion = redisVersion;
    }
  } finally {
    await mocks.close();
    rmSync(dir, { recursive: true, force: true });
  }
  results.loadAverage = { ...results.loadAverage, after: loadAverage() };
  mkdirSync(out, { recursive: true });
  writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  const md = markdown(results);
  writeFileSync(path.join(out, 'cluster.md'), md);
  const took = Math.round((Date.now() - started) / 1000);
  process.stdout.write(`${md}\n→ results/cluster.json, results/cluster.md (${took} s)\n`);
}

await main();
