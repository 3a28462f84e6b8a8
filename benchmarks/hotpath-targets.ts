/**
 * The proxies the hot-path benchmark drives, each started fresh in its own process (pinned to
 * one CPU when `pin` is given) and stopped by pid: the bare reference proxy, cascade with a
 * temporary copy of config/balancer_config/hotpath.toml pointing at the mock nodes, and
 * nginx (worker_processes 1, upstream keep-alive) when it is installed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parse, stringify, type TomlTable } from 'smol-toml';
import { childrenOf } from '../src/bench/process-stats.js';
import { stopChild } from '../src/mock/index.js';

/** Something load can be aimed at. */
export interface Target {
  readonly url: string;
  /** performance.now() when the process was spawned. */
  readonly spawnedAt: number;
  /** The processes whose CPU and memory count as the target's (empty: not measured). */
  pids(): number[];
  stop(): Promise<void>;
}

/** Where and how targets are started. */
export interface TargetSetup {
  /** Where config/ is read from. */
  readonly repoRoot: string;
  /** Where the built dist/ is run from (and the working directory of the targets). */
  readonly runRoot: string;
  readonly tmpDir: string;
  /** Command prefix that pins a process to the proxy CPU, e.g. ['taskset', '-c', '1']. */
  readonly pin: readonly string[];
}

const START_TIMEOUT_MS = 15_000;

function spawnPinned(setup: TargetSetup, command: string, args: string[]): ChildProcess {
  const [first, ...rest] = [...setup.pin, command, ...args];
  return spawn(first!, rest, {
    cwd: setup.runRoot,
    env: { ...process.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Resolves with the first stdout line `pick` maps to a value; rejects on exit or timeout. */
function firstLine<T>(
  child: ChildProcess,
  what: string,
  pick: (line: string) => T | undefined,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(
      () => fail(new Error(`${what} did not start in time`)),
      START_TIMEOUT_MS,
    );
    const onExit = (code: number | null): void => fail(new Error(`${what} exited (${code})`));
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.off('exit', onExit);
      reject(err);
    };
    child.once('exit', onExit);
    // Keep reading after the match: a child blocked on a full stdout pipe would stall.
    lines.on('line', (line) => {
      const value = pick(line);
      if (value === undefined) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(value);
    });
  });
}

async function started(child: ChildProcess, url: Promise<string>): Promise<Target> {
  const spawnedAt = performance.now();
  try {
    const resolved = await url;
    return { url: resolved, spawnedAt, pids: () => [child.pid!], stop: () => stopChild(child) };
  } catch (err) {
    await stopChild(child, { signal: 'SIGKILL', graceMs: 1000 });
    throw err;
  }
}

/** A `cascade serve` started by a benchmark: the process and the URL it printed. */
export interface ServeChild {
  readonly child: ChildProcess;
  readonly url: string;
}

/**
 * `node <root>/dist/cli.js serve --config <config>` in `cwd`, unpinned, logging at info level;
 * resolves once it prints its URL (rejects, and kills it, when it exits or is too slow).
 */
export async function spawnServe(root: string, config: string, cwd: string): Promise<ServeChild> {
  const child = spawn(
    process.execPath,
    [path.join(root, 'dist/cli.js'), 'serve', '--config', config],
    {
      cwd,
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = firstLine(child, 'cascade serve', (line) =>
    line.includes('cascade serving') ? (JSON.parse(line) as { url: string }).url : undefined,
  );
  return { child, url: (await started(child, url)).url };
}

/** Where `npm run bench:hotpath` builds the reference proxy (tsconfig.benchmarks.json). */
export const REFERENCE_PROXY = 'dist-benchmarks/benchmarks/reference-proxy.js';

/**
 * Copies dist/ and dist-benchmarks/ (and package.json) into `tmpDir`, with node_modules
 * linked, so a rebuild of the shared workspace in the middle of a run cannot change what is
 * measured. Returns the root to run from.
 */
export function snapshotDist(repoRoot: string, tmpDir: string): string {
  const root = path.join(tmpDir, 'run');
  mkdirSync(root, { recursive: true });
  for (const dir of ['dist', 'dist-benchmarks']) {
    cpSync(path.join(repoRoot, dir), path.join(root, dir), { recursive: true });
  }
  copyFileSync(path.join(repoRoot, 'package.json'), path.join(root, 'package.json'));
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return root;
}

/** Copies only dist/ (and package.json) of `root`: another checkout may predate benchmarks/. */
export function snapshotCli(root: string, dir: string): string {
  const runRoot = path.join(dir, 'run');
  mkdirSync(runRoot, { recursive: true });
  cpSync(path.join(root, 'dist'), path.join(runRoot, 'dist'), { recursive: true });
  copyFileSync(path.join(root, 'package.json'), path.join(runRoot, 'package.json'));
  symlinkSync(path.join(root, 'node_modules'), path.join(runRoot, 'node_modules'), 'dir');
  return runRoot;
}

/** The mock node itself: nothing to start or measure. */
export function directTarget(url: string): Target {
  return { url, spawnedAt: performance.now(), pids: () => [], stop: () => Promise.resolve() };
}

/** `node [nodeArgs] dist-benchmarks/benchmarks/reference-proxy.js` round-robin over `upstreams`. */
export function startReference(
  setup: TargetSetup,
  upstreams: readonly string[],
  nodeArgs: readonly string[] = [],
): Promise<Target> {
  const script = path.join(setup.runRoot, REFERENCE_PROXY);
  const args = [
    ...nodeArgs,
    script,
    '--port',
    '0',
    ...upstreams.flatMap((url) => ['--upstream', url]),
  ];
  const child = spawnPinned(setup, process.execPath, args);
  const url = firstLine(child, 'reference proxy', (line) =>
    line.startsWith('http://') ? line.trim() : undefined,
  );
  return started(child, url);
}

/** The temporary cascade config and the mocks its first tier uses. */
export interface CascadeConfig {
  readonly file: string;
  readonly nodeCount: number;
  /** URLs of the lowest-tier nodes: where cascade sends everything while they are healthy. */
  readonly firstTier: readonly string[];
}

/** The checkout's own hot-path config. */
export function hotpathToml(repoRoot: string): string {
  return path.join(repoRoot, 'config/balancer_config/hotpath.toml');
}

/** How many nodes a hot-path config declares (default: the checkout's hotpath.toml). */
export function hotpathNodeCount(repoRoot: string, source = hotpathToml(repoRoot)): number {
  return (parse(readFileSync(source, 'utf8')).nodes as TomlTable[]).length;
}

/**
 * Writes the temporary cascade config: `source` (default: the checkout's hotpath.toml) with its
 * nodes' URLs replaced by the mock URLs (in order), price-list paths made absolute against the
 * checkout, port 0 and the usage file in `tmpDir`.
 */
export function writeCascadeConfig(
  setup: TargetSetup,
  mockUrls: readonly string[],
  source = hotpathToml(setup.repoRoot),
): CascadeConfig {
  const doc = parse(readFileSync(source, 'utf8'));
  const server = doc.server as TomlTable;
  server.host = '127.0.0.1';
  server.port = 0;
  server.quotas_path = path.join(setup.tmpDir, 'quotas.json');
  const nodes = doc.nodes as TomlTable[];
  if (nodes.length > mockUrls.length) {
    throw new Error(`${source} has ${nodes.length} nodes but only ${mockUrls.length} mocks`);
  }
  nodes.forEach((node, i) => {
    node.url = mockUrls[i]!;
    const pricing = node.provider_pricing_path;
    if (typeof pricing === 'string')
      node.provider_pricing_path = path.resolve(setup.repoRoot, pricing);
  });
  const file = path.join(setup.tmpDir, 'cascade-hotpath.toml');
  writeFileSync(file, stringify(doc));
  const tiers = nodes.map((node) => Number(node.tier));
  const first = Math.min(...tiers);
  const firstTier = mockUrls.filter((_, i) => tiers[i] === first);
  return { file, nodeCount: nodes.length, firstTier };
}

/** `node [nodeArgs] dist/cli.js serve --config <config>`; its URL comes from the startup log. */
export function startCascade(
  setup: TargetSetup,
  config: string,
  nodeArgs: readonly string[] = [],
): Promise<Target> {
  const cli = path.join(setup.runRoot, 'dist/cli.js');
  const args = [...nodeArgs, cli, 'serve', '--config', config, '--port', '0'];
  const child = spawnPinned(setup, process.execPath, args);
  const url = firstLine(child, 'cascade serve', (line) => {
    if (!line.includes('cascade serving')) return undefined;
    return (JSON.parse(line) as { url: string }).url;
  });
  return started(child, url);
}

/** nginx's version line, or undefined when it is not installed. */
export function nginxVersion(): string | undefined {
  const result = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  return result.stderr.trim().replace(/^nginx version: /, '');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode})`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('nginx did not start in time');
}

function nginxConf(dir: string, port: number, upstreams: readonly string[]): string {
  const servers = upstreams.map((url) => `    server ${new URL(url).host};`).join('\n');
  const runAsRoot = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${runAsRoot}daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  keepalive_requests 1000000;
  upstream mocks {
${servers}
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mocks;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** nginx in the foreground with a temporary config; its master and worker are measured. */
export async function startNginx(
  setup: TargetSetup,
  upstreams: readonly string[],
): Promise<Target> {
  const dir = path.join(setup.tmpDir, 'nginx');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConf(dir, port, upstreams));
  const spawnedAt = performance.now();
  const child = spawnPinned(setup, 'nginx', [
    '-p',
    dir,
    '-c',
    conf,
    '-e',
    path.join(dir, 'error.log'),
  ]);
  child.stdout!.resume();
  try {
    await waitForPort(port, child);
  } catch (err) {
    await stopChild(child, { signal: 'SIGKILL', graceMs: 1000 });
    throw err;
  }
  const master = child.pid!;
  return {
    url: `http://127.0.0.1:${port}`,
    spawnedAt,
    pids: () => [master, ...childrenOf(master)],
    // SIGTERM is nginx's fast shutdown; the master takes its worker down with it.
    stop: () => stopChild(child),
  };
}
