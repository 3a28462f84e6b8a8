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
import { startMockProcess } from '../src/mock/index.js';
import { redisPart } from './cluster-redis-part.js';
import { markdown, type ClusterResults } from './cluster-report.js';
import { CONNECTIONS, workersPart } from './cluster-workers-part.js';

const REPO_ROOT = path.resolve('.');

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
