/**
 * The processes of the cluster benchmark (scripts/bench-cluster.ts): a redis-server without
 * persistence on a free loopback port, read through redis-cli (`CONFIG RESETSTAT`, `INFO
 * commandstats`), and `cascade serve` variants — one process, `--workers N`, or one process
 * with `[cluster] redis_url` — over the same mock nodes, with the CPU time of a process and
 * its children (the workers) from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { childrenOf } from './hotpath-proc.js';

/** A free loopback port (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * CPU seconds a process has run, every thread, at nanosecond resolution: the first field of
 * each /proc/<pid>/task/<tid>/schedstat. (/proc/<pid>/stat counts in clock ticks of 10 ms,
 * too coarse for a few seconds of a process using a fraction of a core.) Threads that have
 * exited are not counted: cascade's (main, libuv pool, V8 helpers) live as long as it does.
 */
export function runSeconds(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e9;
}

/** Resolves with the first stdout line that `match` accepts; rejects if the child exits. */
function waitForLine(child: ChildProcess, what: string, match: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      if (match.test(text)) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}):\n${text}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited.finally(() => clearTimeout(timer));
}

/** Calls of each Redis command (`INFO commandstats`), the benchmark's own reads left out. */
export type CommandCalls = Readonly<Record<string, number>>;

/** A redis-server started by the benchmark. */
export interface BenchRedis {
  readonly url: string;
  readonly pid: number;
  readonly version: string;
  /** `CONFIG RESETSTAT`: command counters back to zero. */
  resetStats(): void;
  /** Command calls since the last reset. */
  commandCalls(): CommandCalls;
  stop(): Promise<void>;
}

/** What the benchmark itself sends through redis-cli; not counted as cascade's. */
const OWN_COMMANDS = new Set(['config|resetstat', 'info']);

/** Parses `INFO commandstats` (`cmdstat_evalsha:calls=12,usec=…`). */
export function parseCommandStats(text: string): CommandCalls {
  const calls: Record<string, number> = {};
  for (const match of text.matchAll(/^cmdstat_(\S+):calls=(\d+)/gm)) {
    if (!OWN_COMMANDS.has(match[1]!)) calls[match[1]!] = Number(match[2]);
  }
  return calls;
}

/** Starts redis-server (Debian's package) as the tests do: no persistence, loopback only. */
export async function startRedis(): Promise<BenchRedis> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await waitForLine(child, 'redis-server', /Ready to accept connections/);
  const cli = (...args: string[]): string =>
    execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
  const version = /redis_version:(\S+)/.exec(cli('INFO', 'server'))?.[1] ?? 'unknown';
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    version,
    resetStats: () => void cli('CONFIG', 'RESETSTAT'),
    commandCalls: () => parseCommandStats(cli('INFO', 'commandstats')),
    stop: () => stopChild(child),
  };
}

/** One way of running cascade. */
export interface Variant {
  readonly name: string;
  readonly workers: number;
  readonly redisUrl?: string;
}

/** A running `cascade serve`. */
export interface BenchCascade {
  readonly variant: Variant;
  readonly url: string;
  /** CPU seconds of the primary and its workers so far. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

/** Writes the config of one variant: every mock a metered tier-0 node with generous limits. */
function writeConfig(
  dir: string,
  repoRoot: string,
  port: number,
  mocks: readonly string[],
  variant: Variant,
): string {
  const prices = path.join(repoRoot, 'config/provider_config/solana.toml');
  const lines = [
    '[server]',
    'host = "127.0.0.1"',
    `port = ${port}`,
    'enable_metrics = true',
    `quotas_path = "${path.join(dir, `${variant.name}.json`)}"`,
    '',
  ];
  if (variant.redisUrl) {
    lines.push(
      '[cluster]',
      `redis_url = "${variant.redisUrl}"`,
      `key_prefix = "bench-${variant.name}"`,
      `replica_id = "${variant.name}"`,
      '',
    );
  }
  mocks.forEach((url, i) => {
    // Limits well above what this machine sends, so the limiter and the quota run on every
    // request (shares, permits, credits) without refusing any.
    lines.push(
      '[[nodes]]',
      `name = "node-${i + 1}"`,
      `url = "${url}"`,
      'tier = 0',
      'rps_limit = 200000',
      'max_concurrent = 1000',
      'monthly_limit = 1_000_000_000_000',
      `provider_pricing_path = "${prices}"`,
      '',
    );
  });
  const file = path.join(dir, `${variant.name}.toml`);
  writeFileSync(file, lines.join('\n'));
  return file;
}

/** Waits (up to 30 s) until `/health` answers 200 several times in a row. */
async function untilHealthy(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let ok = 0;
  while (ok < 5) {
    if (Date.now() > deadline) throw new Error(`${url}health did not answer 200 within 30 s`);
    const status = await fetch(`${url}health`).then(
      (r) => r.arrayBuffer().then(() => r.status),
      () => 0,
    );
    ok = status === 200 ? ok + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts `cascade serve` for `variant`; resolves once it serves (every worker, when several). */
export async function startVariant(
  dir: string,
  repoRoot: string,
  mocks: readonly string[],
  variant: Variant,
): Promise<BenchCascade> {
  const port = await freePort();
  const config = writeConfig(dir, repoRoot, port, mocks, variant);
  const args = [path.join(repoRoot, 'dist/cli.js'), 'serve', '--config', config];
  if (variant.workers > 1) args.push('--workers', String(variant.workers));
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A primary logs that workers share the port before they listen: then /health tells.
  await waitForLine(child, `cascade serve (${variant.name})`, /cascade serving|share the port/);
  const url = `http://127.0.0.1:${port}/`;
  await untilHealthy(url);
  const pid = child.pid!;
  return {
    variant,
    url,
    cpuSeconds: () => [pid, ...childrenOf(pid)].reduce((sum, p) => sum + runSeconds(p), 0),
    stop: () => stopChild(child),
  };
}
