/**
 * Instructions per request on the request path of `cascade serve`: this checkout's cascade
 * against another built checkout's (a commit before a change), each run under valgrind's
 * callgrind and sent the same fixed number of getBalance requests (the hot-path benchmark's
 * body) by a closed-loop client after a warm-up. An instruction count is deterministic where
 * CPU time is not: on a shared machine a wall-clock A/B wobbles by ±5% while the same requests
 * give the same count to within a fraction of a percent, so a change of 1% is visible.
 *
 *     npm run bench:hotpath-instr -- --other ../before|reference [--config benchmarks/user-view.toml]
 *        [--requests 20000] [--warm-up 30000] [--settle 10000] [--connections 50] [--runs 2] [--keep DIR]
 *        [--node-flag=--trace-deopt ...] [--this DIR] [--keyed] [--cache-sim] [--functions N]
 *
 * Each cascade reads its own checkout's hotpath.toml (or the one `--config` file), as in
 * bench:hotpath-ab. `--runs` repeats the measurement on fresh processes (interleaved) and
 * prints every reading and their median; `--keep DIR` keeps the callgrind dumps for
 * callgrind_annotate (native frames only: V8's JIT code is not symbolized; with `--functions`,
 * node's perf map of the JIT code is kept beside them as perf-NAME-RUN.map) and each cascade's
 * stdout; `--node-flag` passes a flag to node (e.g. `--node-flag=--trace-opt`); `--this DIR`
 * measures another built checkout in place of this one; `--keyed` loads each cascade as
 * bench:hotpath's keyed target (require_key and one key, presented in the URL path; the
 * reference stays keyless); `--cache-sim` has callgrind simulate the caches as well (about twice
 * as slow) and adds each side's first-level cache misses a request — what the instruction count
 * leaves out and a CPU-time A/B feels; `--functions N` prints each run's N functions with the
 * most data-read misses (with `--cache-sim`; else the most instructions) a request, V8's JIT
 * code named through node's `--perf-basic-prof` map; `--other reference` measures the bare
 * reference proxy (forwarding round-robin to the config's first tier, as in bench:hotpath) in
 * place of another cascade: the deterministic form of bench:hotpath's cascade/reference. The
 * figure counts
 * what a request costs the proxy process (node:http, undici, cascade, GC), not the client or
 * the mocks; it is not time — memory stalls and syscalls' kernel side are not in it.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse, stringify, type TomlTable } from 'smol-toml';
import { Pool } from 'undici';
import { startMockProcess, type MockProcess } from '../src/mock/index.js';
import {
  hasCallgrind,
  startCallgrindCascade,
  startCallgrindReference,
  type CacheMisses,
  type CallgrindTarget,
  type InstructionSplit,
} from './hotpath-callgrind.js';
import { costByFunction, type FunctionCost } from './hotpath-functions.js';
import { keyedUrl, writeKeyedConfig } from './hotpath-keyed.js';
import { BODY } from './hotpath-placement.js';
import {
  REFERENCE_PROXY,
  hotpathNodeCount,
  snapshotCli,
  writeCascadeConfig,
} from './hotpath-targets.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HEADERS = { 'content-type': 'application/json' };
/**
 * Requests sent instrumented but not counted (default): valgrind re-translates all code when
 * instrumentation goes on, and the process stands still for seconds meanwhile, so timers come
 * due at once (an idle upstream connection's keep-alive, a rate bucket's refill, a penalty's
 * expiry) and take paths the warm-up never took: V8 deoptimizes the functions on them and
 * compiles them again, which must be over before the count starts (2,000 were not: runs of one
 * build then differed by up to 3k instructions a request, with 3k–23k compiler instructions a
 * request in the counted window).
 */
const SETTLE_REQUESTS = 10_000;

/**
 * Under callgrind cascade runs some 50× slower: budgets of minutes (both checkouts accept them)
 * keep a queued request from timing out, which would take another code path and penalize a
 * node. Only deadlines change, not what a request executes.
 */
function slowClockConfig(file: string): void {
  const doc = parse(readFileSync(file, 'utf8'));
  const server = doc.server as TomlTable;
  server.request_timeout_ms = 600_000;
  server.attempt_timeout_ms = 300_000;
  // The client's connections stay open through the pauses of callgrind_control.
  server.keep_alive_timeout_ms = 600_000;
  writeFileSync(file, stringify(doc));
}

/**
 * Sends `count` requests over `pool`'s connections in closed loops; throws on any non-2xx
 * answer. One pool serves a cascade's warm-up and its measurement: connections opened and
 * closed in between would make the next major GC throw away optimized code tied to them
 * ("weak objects" deopts) and put recompilation into the measured window.
 */
async function sendFixed(
  pool: Pool,
  count: number,
  connections: number,
  path: string,
): Promise<void> {
  let left = count;
  let failed = 0;
  const loop = async (): Promise<void> => {
    while (left > 0) {
      left--;
      const { statusCode, body } = await pool.request({
        path,
        method: 'POST',
        headers: HEADERS,
        body: BODY,
      });
      await body.dump();
      if (statusCode < 200 || statusCode >= 300) failed++;
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  if (failed > 0) throw new Error(`${failed} of ${count} requests were not answered 2xx`);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** `--other reference`: the bare reference proxy instead of another checkout's cascade. */
const REFERENCE = 'reference';

interface Options {
  /** A checkout's directory, or REFERENCE. */
  readonly other: string;
  /** The checkout measured as `this` (default: this one). */
  readonly this: string;
  readonly config: string | undefined;
  readonly requests: number;
  readonly warmUp: number;
  /** Requests sent instrumented, not counted, before the count. */
  readonly settle: number;
  readonly connections: number;
  readonly runs: number;
  readonly keep: string | undefined;
  readonly nodeFlags: readonly string[];
  /** Cascade with require_key and one key, loaded with the key in the URL path (bench:hotpath's keyed target). */
  readonly keyed: boolean;
  /** Simulate the caches: report L1 misses a request beside the instructions. */
  readonly cacheSim: boolean;
  /** How many functions to list per run by their self cost (0: none). */
  readonly functions: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      other: { type: 'string' },
      this: { type: 'string' },
      config: { type: 'string' },
      requests: { type: 'string', default: '20000' },
      settle: { type: 'string', default: String(SETTLE_REQUESTS) },
      'warm-up': { type: 'string', default: '30000' },
      connections: { type: 'string', default: '50' },
      runs: { type: 'string', default: '2' },
      keep: { type: 'string' },
      'node-flag': { type: 'string', multiple: true, default: [] },
      keyed: { type: 'boolean', default: false },
      'cache-sim': { type: 'boolean', default: false },
      functions: { type: 'string', default: '0' },
    },
  });
  if (values.other === undefined) throw new Error('--other DIR: the checkout to compare with');
  if (!/^\d+$/.test(values.functions)) {
    throw new Error(
      `--functions ${values.functions}: give how many functions to list, a whole number (e.g. 30)`,
    );
  }
  return {
    other: values.other === REFERENCE ? REFERENCE : path.resolve(values.other),
    this: values.this === undefined ? REPO_ROOT : path.resolve(values.this),
    config: values.config === undefined ? undefined : path.resolve(values.config),
    requests: Number(values.requests),
    warmUp: Number(values['warm-up']),
    settle: Number(values.settle),
    connections: Number(values.connections),
    runs: Number(values.runs),
    keep: values.keep === undefined ? undefined : path.resolve(values.keep),
    nodeFlags: values['node-flag'],
    keyed: values.keyed,
    cacheSim: values['cache-sim'],
    functions: Number(values.functions),
  };
}

/** What an interrupted run (Ctrl-C, SIGTERM) stops first: valgrind children would outlive it. */
const cleanups = new Set<() => unknown>();
function onInterrupt(): void {
  void Promise.allSettled([...cleanups].map((cleanup) => Promise.resolve().then(cleanup))).then(
    () => process.exit(130),
  );
}
process.once('SIGINT', onInterrupt);
process.once('SIGTERM', onInterrupt);

/** One fresh cascade of checkout `name`: warmed up, then `requests` counted. */
async function countOnce(
  o: Options,
  name: 'this' | 'other',
  run: number,
  urls: readonly string[],
  tmpDir: string,
  outDir: string,
): Promise<Reading> {
  const reference = name === 'other' && o.other === REFERENCE;
  // The reference runs from this checkout's build, to the tier cascade's config fills first.
  const root = name === 'this' || reference ? o.this : o.other;
  const dir = path.join(tmpDir, `${name}-${run}`);
  const runRoot = snapshotCli(root, dir);
  const setup = { repoRoot: root, runRoot, tmpDir: dir, pin: [] };
  const config = writeCascadeConfig(setup, urls, o.config);
  // The reference has no keys: it is loaded on `/` either way.
  const keyed = o.keyed && !reference;
  const file = keyed ? writeKeyedConfig(setup, config.file) : config.file;
  const requestPath = keyed ? keyedUrl('') : '/';
  slowClockConfig(file);
  // Listing functions names V8's JIT code from the map node writes with this flag.
  const perfMapped = o.functions > 0 && !o.nodeFlags.includes(PERF_MAP_FLAG);
  const nodeFlags = perfMapped ? [...o.nodeFlags, PERF_MAP_FLAG] : o.nodeFlags;
  let target: CallgrindTarget | undefined;
  let pool: Pool | undefined;
  try {
    target = reference
      ? await startCallgrindReference(
          // dist-benchmarks is not in the snapshot: the reference runs where it was built.
          o.this,
          REFERENCE_PROXY,
          config.firstTier,
          outDir,
          `${name}-${run}`,
          nodeFlags,
          o.cacheSim,
        )
      : await startCallgrindCascade(runRoot, file, outDir, `${name}-${run}`, nodeFlags, o.cacheSim);
    cleanups.add(target.stop);
    pool = new Pool(target.url, { connections: o.connections, pipelining: 1 });
    const client = pool;
    await sendFixed(client, o.warmUp, o.connections, requestPath);
    const { loaded, idle, loadedDump } = await target.measure(
      () => sendFixed(client, o.settle, o.connections, requestPath),
      () => sendFixed(client, o.requests, o.connections, requestPath),
    );
    const per = (value: number): number => value / o.requests;
    const misses = missesPer(loaded.misses, idle.misses, o.requests);
    return {
      total: per(loaded.total),
      compiler: per(loaded.compiler),
      gc: per(loaded.gc),
      idle: per(idle.total - idle.compiler),
      ...(misses ? { misses } : {}),
      functions:
        o.functions > 0
          ? costByFunction(
              loadedDump,
              loaded.misses !== undefined,
              perfMapOf(target.pid),
              o.functions,
            ).map((f) => ({
              name: f.name,
              instructions: per(f.instructions),
              dataReadMisses: f.dataReadMisses === undefined ? undefined : per(f.dataReadMisses),
            }))
          : [],
    };
  } finally {
    await pool?.close();
    if (target !== undefined) {
      cleanups.delete(target.stop);
      await target.stop();
      if (perfMapped && o.keep !== undefined && existsSync(perfMapOf(target.pid))) {
        // Kept beside the dumps: their JIT addresses mean nothing without it.
        copyFileSync(perfMapOf(target.pid), path.join(o.keep, `perf-${name}-${run}.map`));
      }
      if (perfMapped) rmSync(perfMapOf(target.pid), { force: true });
    }
  }
}

/** node's `--perf-basic-prof`: a map of its JIT code's addresses to function names. */
const PERF_MAP_FLAG = '--perf-basic-prof';
const perfMapOf = (pid: number): string => path.join('/tmp', `perf-${pid}.map`);

async function main(): Promise<void> {
  const o = options();
  if (!hasCallgrind()) throw new Error('valgrind (callgrind, callgrind_control) is not installed');
  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'cascade-instr-'));
  const outDir = o.keep ?? path.join(tmpDir, 'callgrind');
  mkdirSync(outDir, { recursive: true });
  let mocks: MockProcess | undefined;
  const readings = { this: [] as Reading[], other: [] as Reading[] };
  try {
    const nodes = hotpathNodeCount(REPO_ROOT, o.config);
    mocks = await startMockProcess(
      Array.from({ length: nodes }, (_, i) => ({ name: `hotpath-${i + 1}` })),
    );
    const started = mocks;
    cleanups.add(() => started.close());
    cleanups.add(() => rmSync(tmpDir, { recursive: true, force: true }));
    const urls = mocks.nodes.map((node) => node.url);
    for (let run = 0; run < o.runs; run++) {
      // Alternate which goes first, so drift of the mocks' state favours neither.
      const order = run % 2 === 0 ? (['this', 'other'] as const) : (['other', 'this'] as const);
      for (const name of order) {
        const split = await countOnce(o, name, run, urls, tmpDir, outDir);
        readings[name].push(split);
        process.stdout.write(`${name} run ${run + 1}: ${describe(split)}\n`);
        process.stdout.write(describeFunctions(split.functions));
      }
    }
  } finally {
    await mocks?.close();
    rmSync(tmpDir, { recursive: true, force: true });
  }
  process.stdout.write(report(o, readings.this, readings.other));
}

const round = (value: number): string => Math.round(value).toLocaleString('en-US');

/**
 * Misses a request: the loaded window's less the idle window's (timers' own). The compiler's
 * misses stay in: they are few, and not told apart in a dump's totals.
 */
function missesPer(
  loaded: CacheMisses | undefined,
  idle: CacheMisses | undefined,
  requests: number,
): CacheMisses | undefined {
  if (loaded === undefined || idle === undefined) return undefined;
  return {
    instruction: (loaded.instruction - idle.instruction) / requests,
    dataRead: (loaded.dataRead - idle.dataRead) / requests,
    dataWrite: (loaded.dataWrite - idle.dataWrite) / requests,
  };
}

/** One run's figures per request. */
interface Reading extends InstructionSplit {
  /** What an idle window as long as the loaded one executed (less the compiler), per request. */
  readonly idle: number;
  /** With `--functions N`: the top N functions' self cost a request (loaded window). */
  readonly functions: readonly FunctionCost[];
}

/** The request path: all instructions less V8's compiler threads and the idle background. */
const pathOf = (r: Reading): number => r.total - r.compiler - r.idle;

function describe(r: Reading): string {
  const misses = r.misses ? `; ${describeMisses(r.misses)}` : '';
  return `request path ${round(pathOf(r))} instructions/request (all ${round(r.total)}: JIT compiler ${round(r.compiler)}, idle background ${round(r.idle)}; GC ${round(r.gc)})${misses}`;
}

/** `--functions`: one line per function, misses (when simulated) and instructions a request. */
function describeFunctions(functions: readonly FunctionCost[]): string {
  return functions
    .map((f) => {
      const misses =
        f.dataReadMisses === undefined ? '' : `${f.dataReadMisses.toFixed(1).padStart(7)} misses `;
      return `    ${misses}${round(f.instructions).padStart(7)} instructions  ${f.name}\n`;
    })
    .join('');
}

function describeMisses(m: CacheMisses): string {
  return `L1 misses/request: data read ${round(m.dataRead)}, data write ${round(m.dataWrite)}, instruction ${round(m.instruction)}`;
}

/** Each kind of miss: the median over runs (undefined without --cache-sim). */
function medianMisses(readings: readonly Reading[]): CacheMisses | undefined {
  const all = readings.map((r) => r.misses).filter((m): m is CacheMisses => m !== undefined);
  if (all.length === 0) return undefined;
  return {
    instruction: median(all.map((m) => m.instruction)),
    dataRead: median(all.map((m) => m.dataRead)),
    dataWrite: median(all.map((m) => m.dataWrite)),
  };
}

/**
 * The medians of both checkouts. The comparison that counts is the request path: the
 * compiler's threads still optimize now and then after the warm-up (a function re-optimized
 * in one run and not the other moves the total by 1-3%), and timers' work is ~50x
 * over-weighted per request under valgrind (the idle window measures it).
 */
function report(o: Options, mine: readonly Reading[], theirs: readonly Reading[]): string {
  const thisPath = median(mine.map(pathOf));
  const otherPath = median(theirs.map(pathOf));
  const runs = (v: readonly Reading[]): string => v.map((r) => round(pathOf(r))).join(', ');
  const mineMisses = medianMisses(mine);
  const theirMisses = medianMisses(theirs);
  const misses =
    mineMisses && theirMisses
      ? [
          `this  ${describeMisses(mineMisses)} (simulated, loaded less idle)`,
          `other ${describeMisses(theirMisses)}`,
          `this / other: data read misses ${(mineMisses.dataRead / theirMisses.dataRead).toFixed(3)}x, instruction misses ${(mineMisses.instruction / theirMisses.instruction).toFixed(3)}x`,
        ]
      : [];
  return [
    `callgrind, ${o.requests} requests after ${o.warmUp} warm-up and ${o.settle} settling, ${o.connections} connections, config ${o.config ?? "each checkout's hotpath.toml"}${o.keyed ? ', keyed (require_key, the key in the path)' : ''}`,
    `this  (${o.this}): request path ${round(thisPath)} instructions/request (runs: ${runs(mine)})`,
    `other (${o.other}): request path ${round(otherPath)} instructions/request (runs: ${runs(theirs)})`,
    `this / other: ${(thisPath / otherPath).toFixed(3)}x (medians of the request path)`,
    ...misses,
    '',
  ].join('\n');
}

await main();
