/**
 * A real redis-server (Debian's package, installed by .ci/run) started by a test: on a free
 * loopback port, without persistence (a snapshot only when the test asks for one, in a temp
 * directory of its own), stopped by PID. Tests that need it call `redisUnavailable` and skip,
 * saying why, when the binary is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterConfig } from '../../src/core/config/types.js';
import { freePort } from './free-port.js';

/** Why Redis tests cannot run here, or undefined when they can. */
export function redisUnavailable(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return 'redis-server is not installed (apt-get install redis-server; .ci/run does it)';
  }
  return undefined;
}

/** A running redis-server. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Kills it (SIGKILL: its data is gone) and starts a fresh one on the same port. */
  restart(): Promise<void>;
  /** Kills it; `start` brings it back empty. */
  kill(): Promise<void>;
  /** Starts it again: empty, or with the data of the last `snapshot` (an older state). */
  start(options?: { fromSnapshot?: boolean }): Promise<void>;
  /** Writes what it holds now to its snapshot file (SAVE), for a later `start`. */
  snapshot(): void;
  stop(): Promise<void>;
  /** Runs a redis-cli command against it; stdout. */
  cli(...args: string[]): string;
}

async function launch(port: number, dir: string, extra: readonly string[]): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    // `--save ''`: no automatic snapshots; a start loads `dir`/dump.rdb only if a test SAVEd it.
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'].concat(
      ['--dir', dir, '--dbfilename', 'dump.rdb'],
      extra,
    ),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.resume();
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts redis-server on a free port; `extra` are more redis-server arguments. */
export async function startRedis(extra: readonly string[] = []): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'cascade-redis-'));
  let child: ChildProcess | undefined = await launch(port, dir, extra);
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      if (!child) return;
      const dying = child;
      child = undefined;
      dying.kill('SIGKILL');
      await exited(dying);
    },
    async start(options) {
      if (child) return;
      if (!options?.fromSnapshot) rmSync(join(dir, 'dump.rdb'), { force: true });
      child = await launch(port, dir, extra);
    },
    snapshot() {
      const reply = server.cli('SAVE');
      if (reply !== 'OK') throw new Error(`redis SAVE failed: ${reply}`);
    },
    async restart() {
      await server.kill();
      await server.start();
    },
    async stop() {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
    },
    cli(...args) {
      const run = spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
      return run.stdout.trim();
    },
  };
  return server;
}

/**
 * The `[cluster]` of a replica `id` on `redis` under `prefix`, syncing every `intervalMs` (the
 * in-process Redis tests' short settings: a 250 ms Redis timeout, a 1 s lease).
 */
export function replicaCluster(
  redis: RedisServer,
  id: string,
  prefix: string,
  intervalMs: number,
): ClusterConfig {
  return {
    workers: 1,
    redisUrl: redis.url,
    redactedRedisUrl: redis.url,
    keyPrefix: prefix,
    replicaId: id,
    syncIntervalMs: intervalMs,
    redisTimeoutMs: 250,
    leaseTtlMs: 1000,
    fallbackFraction: undefined,
  };
}
