/**
 * What several workers and shared limits through Redis cost and give (issue 17, Performance).
 * Two parts, each alternating the variants it compares window by window (A, B, A, B, …) so
 * that load from anything else on the machine hits both alike:
 *
 * - workers: `cascade serve --workers 2` vs one process, closed loop (wrk, 50 connections):
 *   req/s, latency, and the CPU per request of the proxy (primary + workers, from /proc);
 * - redis: one process with `[cluster] redis_url` vs without, at two fixed rates (open loop):
 *   CPU per request of the proxy, and Redis commands (`CONFIG RESETSTAT` before a window,
 *   `INFO commandstats` after) per request and per second — with no traffic too, to show they
 *   do not follow traffic.
 *
 * Load generator, mock nodes, Redis and proxy share this machine's cores: the report says how
 * many and how busy they were. Writes results/cluster.json and .md. Linux only (/proc). Run
 * from the repository root:
 *
 *     npm run bench:cluster [-- --part workers|redis|all --seconds 2 --rounds 3 --rates 500,3000]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
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
import { LoadClient, runWrk, writeWrkScript } from './hotpath-load.js';
import { startMockProcess, type MockProcess } from './hotpath-mocks.js';
import { cpuBusySeconds } from './hotpath-proc.js';

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
  for (let cpu = 0; cpu < os.availableParallelism(); cpu++) total += cpuBusySeconds(cpu) ?? NaN;
  return total;
}

/** CPU seconds of `proxy`, of the mocks and of the machine over `run`; wall seconds too. */
async function metered<T>(
  proxy: BenchCascade,
  mocks: MockProcess,
  run: () => Promise<T>,
): Promise<{ result: T; proxyCpu: number; mocksCpu: number; machineCpu: number; wall: number }> {
  const before = [proxy.cpuSeconds(), runSeconds(mocks.pid), machineBusy(), performance.now()];
  const result = await run();
  // The proxy's last writes may be accounted a moment after the client has its answers.
  await sleep(20);
  return {
    result,
    proxyCpu: proxy.cpuSeconds() - before[0]!,
    mocksCpu: runSeconds(mocks.pid) - before[1]!,
    machineCpu: machineBusy() - before[2]!,
    wall: (performance.now() - before[3]!) / 1000,
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
    await startVariant(dir, REPO_ROOT, mocks.urls, { name: 'workers-1', workers: 1 }),
    await startVariant(dir, REPO_ROOT, mocks.urls, { name: 'workers-2', workers: 2 }),
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
        const m = await metered(proxy, mocks, () => runWrk(spec, script));
        const load = m.result;
        windows.push({
          variant: proxy.variant.name,
          round,
          rps: load.rps,
          p50Us: load.p50Us,
          p99Us: load.p99Us,
          errors: load.errors,
          proxyCpuUsPerRequest: (m.proxyCpu * 1e6) / load.requests,
          proxyCores: m.proxyCpu / m.wall,
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
    await startVariant(dir, REPO_ROOT, mocks.urls, { name: 'single', workers: 1 }),
    await startVariant(dir, REPO_ROOT, mocks.urls, {
      name: 'redis',
      workers: 1,
      redisUrl: redis.url,
    }),
  ];
  const clients = variants.map((v) => new LoadClient(v.url, BODY, 20));
  const windows: RedisWindow[] = [];
  const record = (
    proxy: BenchCascade,
    round: number,
    rate: number,
    m: Awaited<ReturnType<typeof metered<number>>>,
    calls: CommandCalls | undefined,
  ): void => {
    const requests = m.result;
    const { roundTrips, inScript } = calls ? split(calls) : { roundTrips: NaN, inScript: NaN };
    windows.push({
      variant: proxy.variant.name,
      round,
      rate,
      requests,
      wallSeconds: m.wall,
      proxyCpuUsPerRequest: requests > 0 ? (m.proxyCpu * 1e6) / requests : NaN,
      proxyCores: m.proxyCpu / m.wall,
      machineCores: m.machineCpu / m.wall,
      redisRoundTripsPerSecond: roundTrips / m.wall,
      redisCommandsInScriptPerSecond: inScript / m.wall,
      redisRoundTripsPerRequest: requests > 0 ? roundTrips / requests : NaN,
      redisCalls: calls,
    });
  };
  try {
    // Warm-up (the JIT compiles the hot path in the first seconds of traffic), then windows
    // with no traffic at all: what the sync costs by itself.
    for (const client of clients) await client.fixedRate(rates[1]!, 2, false);
    await sleep(500);
    for (let round = 1; round <= rounds; round++) {
      for (const proxy of variants) {
        if (proxy.variant.redisUrl) redis.resetStats();
        const m = await metered(proxy, mocks, () => sleep(seconds * 1000).then(() => 0));
        record(proxy, round, 0, m, proxy.variant.redisUrl ? redis.commandCalls() : undefined);
      }
    }
    for (const rate of rates) {
      for (let round = 1; round <= rounds; round++) {
        for (const [i, proxy] of variants.entries()) {
          if (proxy.variant.redisUrl) redis.resetStats();
          const m = await metered(proxy, mocks, async () => {
            const load = await clients[i]!.fixedRate(rate, seconds);
            if (load.errors > 0) throw new Error(`${proxy.variant.name}: ${load.errors} errors`);
            return load.requests;
          });
          record(proxy, round, rate, m, proxy.variant.redisUrl ? redis.commandCalls() : undefined);
          process.stdout.write(`redis: ${proxy.variant.name} at ${rate}/s round ${round}: done\n`);
        }
      }
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
      rates: { type: 'string', default: '500,3000' },
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
  const mocks = await startMockProcess(2);
  await mocks.setDelay(0);
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
    await mocks.stop();
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
