/**
 * One `cascade serve` run under valgrind's callgrind, for counting the instructions its request
 * path executes: started with instrumentation off (start-up and warm-up run uninstrumented,
 * JIT tiering settles), then `measure()` switches instrumentation on, zeroes the counters, lets
 * the caller send a fixed number of requests, dumps the counters and reads their total. The
 * count covers every thread of the process (the main thread, GC helpers, compiler threads), so
 * allocation and garbage collection are in it. Unlike CPU time it does not depend on what else
 * the machine is doing: the same requests give nearly the same count.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { stopChild } from '../src/mock/index.js';

/**
 * V8's heuristics that read the wall clock, which under valgrind runs some 50× slow against
 * the work done: the memory reducer takes the low allocation rate per second for idleness and
 * starts major GCs (which throw away optimized code and flush bytecode, so functions are
 * compiled again inside the measured window), and the young generation is sized from
 * throughput. Both off or fixed at what a loaded server reaches (16 MB semi-spaces on 64-bit),
 * the count is the same from run to run.
 */
export const STEADY_V8_FLAGS = [
  '--no-memory-reducer',
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
] as const;

/** Valgrind is slow to start node (~20–60 s on a busy 2-core VM). */
const START_TIMEOUT_MS = 180_000;

/** A cascade running under callgrind. */
export interface CallgrindTarget {
  readonly url: string;
  /** node's process id (valgrind runs it in place): names its perf map, /tmp/perf-PID.map. */
  readonly pid: number;
  /**
   * Instructions executed while `load` ran (all threads), after `settle` ran instrumented but
   * uncounted (valgrind re-translates all code once instrumentation is on); then those of an
   * idle window as long.
   */
  measure(settle: () => Promise<void>, load: () => Promise<void>): Promise<Measured>;
  readonly stop: () => Promise<void>;
}

/** Whether valgrind and callgrind_control can be run here. */
export function hasCallgrind(): boolean {
  const v = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  const c = spawnSync('callgrind_control', ['-h'], { encoding: 'utf8' });
  return !v.error && v.status === 0 && !c.error;
}

function control(pid: number, args: readonly string[]): void {
  const result = spawnSync('callgrind_control', [...args, String(pid)], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.error || result.status !== 0) {
    throw new Error(`callgrind_control ${args.join(' ')} failed: ${result.stderr || result.error}`);
  }
}

/** Native frames of V8's compilers (TurboFan, Maglev, baseline, bytecode, the parser). */
const COMPILER_FRAME =
  /v8::internal::(compiler::|turboshaft::|maglev::|baseline::|interpreter::|Parser|Scanner|Zone|OptimizedCompilationJob|Compiler::)/;
/** Native frames of the garbage collector. */
const GC_FRAME =
  /v8::internal::(Heap|Scaveng|Mark|Sweep|Evacuat|Concurrent|Remembered|SlotSet|Worklist|FreeList|PagedSpace|MemoryChunk|Compactor)|heap::base::|cppgc::/;

/** Instructions of one dump: in all, and of them in V8's compilers and in its GC. */
export interface InstructionSplit {
  readonly total: number;
  readonly compiler: number;
  readonly gc: number;
  /** With `--cache-sim=yes`: the simulated first-level cache misses of the whole dump. */
  readonly misses?: CacheMisses;
}

/**
 * Simulated first-level cache misses (callgrind's I1mr, D1mr, D1mw): what makes the same
 * instructions take longer. A read that misses the first-level cache waits some 15 cycles for L2,
 * more for L3, where an instruction costs about one: two proxies can execute nearly
 * the same instructions and still differ in time by the data they touch.
 */
export interface CacheMisses {
  readonly instruction: number;
  readonly dataRead: number;
  readonly dataWrite: number;
}

/**
 * What `measure` counted: the loaded window, then an idle window as long. Under valgrind a
 * request takes ~50x longer, so work that runs per second (the ranking tick, gauges, GC's
 * timers) weighs ~50x more per request than on a real server; the idle window measures it, to
 * be taken off.
 */
export interface Measured {
  readonly loaded: InstructionSplit;
  readonly idle: InstructionSplit;
  readonly seconds: number;
  /** The loaded window's dump (deleted with the run's directory unless kept). */
  readonly loadedDump: string;
}

/** Self instructions per function of a dump (callgrind_annotate), split by kind. */
export function splitOf(file: string): InstructionSplit {
  // Instructions alone: a dump taken with --cache-sim has the misses' columns too.
  const result = spawnSync(
    'callgrind_annotate',
    ['--inclusive=no', '--threshold=100', '--show=Ir', '--sort=Ir', file],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  let compiler = 0;
  let gc = 0;
  for (const line of result.stdout.split('\n')) {
    const row = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (row === null || row[2]!.includes('PROGRAM TOTALS')) continue;
    const count = Number(row[1]!.replaceAll(',', ''));
    if (COMPILER_FRAME.test(row[2]!)) compiler += count;
    else if (GC_FRAME.test(row[2]!)) gc += count;
  }
  const totals = totalsOf(file);
  const misses = missesIn(totals);
  return { total: instructionsIn(totals, file), compiler, gc, ...(misses ? { misses } : {}) };
}

/** A dump's totals by event name (`events:` and the `summary:` or `totals:` line). */
function totalsOf(file: string): Map<string, number> {
  const text = readFileSync(file, 'utf8');
  const events = /^events: (.*)$/m.exec(text)?.[1]?.split(' ') ?? [];
  const totals = /^(?:summary|totals): (.*)$/m.exec(text)?.[1]?.split(' ').map(Number) ?? [];
  return new Map(events.map((name, i) => [name, totals[i] ?? 0]));
}

function instructionsIn(totals: Map<string, number>, file: string): number {
  const count = totals.get('Ir');
  if (count === undefined) throw new Error(`${file}: no totals line`);
  return count;
}

function missesIn(totals: Map<string, number>): CacheMisses | undefined {
  const instruction = totals.get('I1mr');
  const dataRead = totals.get('D1mr');
  const dataWrite = totals.get('D1mw');
  if (instruction === undefined || dataRead === undefined || dataWrite === undefined)
    return undefined;
  return { instruction, dataRead, dataWrite };
}

/** The `summary:` (or `totals:`) line of a callgrind dump: instructions executed. */
export function totalOf(file: string): number {
  return instructionsIn(totalsOf(file), file);
}

/** The dump's cache misses, when it was taken with `--cache-sim=yes` (else undefined). */
export function missesOf(file: string): CacheMisses | undefined {
  return missesIn(totalsOf(file));
}

/** What a started process prints once it serves: its URL, read from one line of its stdout. */
type UrlLine = (line: string) => string | undefined;

/** cascade serve's JSON start line. */
const CASCADE_SERVING: UrlLine = (line) =>
  line.includes('cascade serving') ? (JSON.parse(line) as { url: string }).url : undefined;

/** The reference proxy prints its URL alone. */
const REFERENCE_SERVING: UrlLine = (line) => (line.startsWith('http://') ? line.trim() : undefined);

function urlOf(child: ChildProcess, log: WriteStream, urlLine: UrlLine): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => log.write(line + '\n'));
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      reject(new Error('the proxy under valgrind did not start in time'));
    }, START_TIMEOUT_MS);
    const onExit = (code: number | null): void => {
      clearTimeout(timer);
      reject(new Error(`the proxy under valgrind exited (${code})`));
    };
    child.once('exit', onExit);
    // Keep reading after the match: a child blocked on a full stdout pipe would stall.
    lines.on('line', (line) => {
      const url = urlLine(line);
      if (url === undefined) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(url);
    });
  });
}

/**
 * `valgrind --tool=callgrind node STEADY_V8_FLAGS [nodeFlags] <runRoot>/dist/cli.js serve --config <config>`,
 * its dumps written to `outDir` (callgrind.out.<name>.*) with its stdout (stdout.<name>.log),
 * instrumentation off until `measure`.
 */
export function startCallgrindCascade(
  runRoot: string,
  config: string,
  outDir: string,
  name: string,
  nodeFlags: readonly string[] = [],
  cacheSim = false,
): Promise<CallgrindTarget> {
  const script = [path.join(runRoot, 'dist/cli.js'), 'serve', '--config', config, '--port', '0'];
  return startCallgrind(runRoot, script, CASCADE_SERVING, outDir, name, nodeFlags, cacheSim);
}

/**
 * The bare reference proxy (benchmarks/reference-proxy.ts) under callgrind, forwarding
 * round-robin to `upstreams`: the yardstick's own count, measured like a cascade.
 */
export function startCallgrindReference(
  runRoot: string,
  referenceScript: string,
  upstreams: readonly string[],
  outDir: string,
  name: string,
  nodeFlags: readonly string[] = [],
  cacheSim = false,
): Promise<CallgrindTarget> {
  const script = [
    path.join(runRoot, referenceScript),
    '--port',
    '0',
    ...upstreams.flatMap((url) => ['--upstream', url]),
  ];
  return startCallgrind(runRoot, script, REFERENCE_SERVING, outDir, name, nodeFlags, cacheSim);
}

async function startCallgrind(
  runRoot: string,
  script: readonly string[],
  urlLine: UrlLine,
  outDir: string,
  name: string,
  nodeFlags: readonly string[],
  /** Simulate the caches too (about twice as slow): the dumps then carry L1 misses. */
  cacheSim: boolean,
): Promise<CallgrindTarget> {
  const outFile = path.join(outDir, `callgrind.out.${name}`);
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      ...(cacheSim ? ['--cache-sim=yes'] : []),
      `--callgrind-out-file=${outFile}`,
      '--log-file=' + path.join(outDir, `valgrind.${name}.log`),
      process.execPath,
      ...STEADY_V8_FLAGS,
      ...nodeFlags,
      ...script,
    ],
    {
      cwd: runRoot,
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const log = createWriteStream(path.join(outDir, `stdout.${name}.log`));
  let url: string;
  try {
    url = await urlOf(child, log, urlLine);
  } catch (err) {
    await stopChild(child, { signal: 'SIGKILL', graceMs: 1000 });
    throw err;
  }
  const pid = child.pid!;
  /** Dumps the counters since the last zero or dump (which zeroes them): the dump's file. */
  const dump = (label: string): string => {
    const before = new Set(readdirSync(outDir));
    control(pid, [`--dump=${label}`]);
    const dumped = readdirSync(outDir).filter(
      (f) => f.startsWith(`callgrind.out.${name}`) && !before.has(f),
    );
    if (dumped.length !== 1) throw new Error(`callgrind wrote ${dumped.length} dumps for ${name}`);
    return path.join(outDir, dumped[0]!);
  };
  return {
    url,
    pid,
    async measure(settle, load) {
      control(pid, ['--instr=on']);
      log.write('=== instrumented\n');
      await settle();
      control(pid, ['--zero']);
      log.write('=== counted\n');
      const started = performance.now();
      await load();
      const seconds = (performance.now() - started) / 1000;
      const loadedDump = dump('measured');
      const loaded = splitOf(loadedDump);
      // As long again with no requests: what timers (ranking tick, metrics, GC) cost on their own.
      log.write('=== idle\n');
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const idle = splitOf(dump('idle'));
      control(pid, ['--instr=off']);
      log.write('=== done\n');
      return { loaded, idle, seconds, loadedDump };
    },
    stop: () => stopChild(child, { graceMs: 30_000 }),
  };
}
