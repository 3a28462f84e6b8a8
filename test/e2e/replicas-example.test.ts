/**
 * examples/replicas runs for real, outside containers, as test/e2e/examples.test.ts runs
 * basic_setup: its compose file's command lines — Redis's, the mocks', and each cascade
 * replica's (one of them `--workers 2`) — run on the host with the built CLI and Debian's
 * redis-server, and prove that the two replicas act as one proxy: each serves, the mocks see
 * every request, `cascade quota show` in either replica's container prints the fleet's
 * usage, not its own, both count two members, and both stop cleanly on SIGTERM.
 *
 * The container world becomes the host's by the same rewrites as basic_setup's, except that
 * each container has its own network namespace, so each replica gets its own copy of the
 * mounted config with its own ports (proxy, admin), and service names used as hosts in the
 * config (`redis://redis:6379`) become 127.0.0.1 and a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, assertBuilt, runCli } from '../helpers/run-cli.js';
import { makeTempDir, type TempDir } from '../helpers/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { hostRun, mountsOf, pathMapper, portMapper, readCompose } from '../support/compose.js';
import { readImage } from '../support/dockerfile.js';
import { freePort } from '../support/free-port.js';
import { postJson } from '../support/processes.js';
import { redisUnavailable } from '../support/redis-server.js';

const compose = readCompose('examples/replicas/docker-compose.yml');
const image = readImage();
const missing = redisUnavailable();
const configPath = image.env.CONFIG_PATH!;
const replicas = Object.keys(compose.services).filter((name) => name.startsWith('cascade-'));
const configSource = mountsOf(compose, compose.services[replicas[0]!]!).find(
  (m) => m.target === configPath,
)!.source;
const configText = readFileSync(configSource, 'utf8');
const config = parseToml(configText) as {
  server: { port: number; admin_port: number };
  cluster: { redis_url: string };
  nodes: Array<{ name: string; url: string }>;
};

let temp: TempDir | undefined;
const processes: CliProcess[] = [];
let redis: ChildProcess | undefined;
beforeAll(() => {
  assertBuilt();
  if (missing) console.warn(`skipping the replicas example: ${missing}`);
});
afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop('SIGKILL')));
  redis?.kill('SIGKILL');
  redis = undefined;
  temp?.cleanup();
});

/** The redis service's command (its image runs `redis-server` as given) on a loopback port. */
async function startRedisService(port: number): Promise<ChildProcess> {
  const [binary, ...args] = compose.services.redis!.command!;
  const child = spawn(binary!, [...args, '--port', String(port), '--bind', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${text}`)));
  });
  return child;
}

/** Sum of `requests` over the mocks' /__stats. */
async function mockRequests(ports: readonly number[]): Promise<number> {
  let total = 0;
  for (const port of ports) {
    const stats = (await (await fetch(`http://127.0.0.1:${port}/__stats`)).json()) as {
      requests: number;
    };
    total += stats.requests;
  }
  return total;
}

describe.skipIf(missing)('examples/replicas, its commands run on the host', () => {
  it('two replicas on one Redis: each serves, usage is the fleet’s from either one', async () => {
    temp = makeTempDir('cascade-replicas-example-');
    const nodePorts = config.nodes.map((node) => Number(/:(\d+)$/.exec(node.url)![1]));
    const shared = new Map<number, number>();
    for (const port of nodePorts) shared.set(port, await freePort());
    const redisPort = await freePort();
    shared.set(Number(new URL(config.cluster.redis_url).port), redisPort);

    /** The rewrite of one container: its own proxy and admin ports, its own data volume. */
    const world = async (name: string) => {
      const ports = new Map(shared);
      ports.set(config.server.port, await freePort());
      const admin = await freePort();
      const dir = temp!.path(name);
      const volume = path.join(dir, 'data');
      mkdirSync(volume, { recursive: true });
      const copy = path.join(dir, 'cascade.toml');
      const toPaths = pathMapper({
        '/app': REPO_ROOT,
        [configPath]: copy,
        [image.workdir]: volume,
      });
      const hosts = Object.keys(compose.services).join('|');
      const rewrite = (text: string): string =>
        portMapper(ports)(toPaths(text))
          .replace(/^(\s*admin_port\s*=\s*)\d+/m, `$1${admin}`)
          .replace(new RegExp(`//(${hosts}):`, 'g'), '//127.0.0.1:')
          .replaceAll('0.0.0.0', '127.0.0.1');
      writeFileSync(copy, rewrite(configText));
      return { run: hostRun(compose, name, image, rewrite), port: ports.get(config.server.port)! };
    };

    redis = await startRedisService(redisPort);
    const mocksRun = (await world('mocks')).run;
    const mocks = startCli(mocksRun.args, { env: mocksRun.env, cwd: mocksRun.cwd });
    processes.push(mocks);
    await mocks.waitFor(/mock node\(s\) running/);

    const fleet = await Promise.all(
      replicas.map(async (name) => ({ name, ...(await world(name)) })),
    );
    expect(fleet.map((r) => r.run.args)).toContainEqual(['serve', '--workers', '2']);
    const proxies: CliProcess[] = [];
    for (const replica of fleet) {
      const proxy = startCli(replica.run.args, { env: replica.run.env, cwd: replica.run.cwd });
      processes.push(proxy);
      proxies.push(proxy);
      await proxy.waitFor(/cascade serving|workers share the port/);
    }
    for (const replica of fleet) {
      await expect
        .poll(
          async () =>
            (await fetch(`http://127.0.0.1:${replica.port}/health`).catch(() => undefined))?.status,
        )
        .toBe(200);
    }

    // 3 requests through one replica, 2 through the other.
    let id = 0;
    for (const [i, replica] of fleet.entries()) {
      for (let n = 0; n < 3 - i; n++) {
        const answer = await postJson(`http://127.0.0.1:${replica.port}/`, {
          jsonrpc: '2.0',
          id: ++id,
          method: 'getBalance',
          params: ['11111111111111111111111111111111'],
        });
        expect(answer.status).toBe(200);
      }
    }
    // Each reached a mock (a retry or hedge on a starved machine may ask a second one).
    expect(await mockRequests(nodePorts.map((p) => shared.get(p)!))).toBeGreaterThanOrEqual(id);

    // `docker compose exec <replica> cascade quota show`: each prints the fleet's usage — the
    // same total from both, covering every request (each costs at least a credit) — where
    // each replica's own would differ (3 requests against 2).
    const shown = async (replica: (typeof fleet)[number]): Promise<number> => {
      const run = await runCli(['quota', 'show', '--json'], {
        env: replica.run.env,
        cwd: replica.run.cwd,
      });
      const { nodes } = JSON.parse(run.stdout) as { nodes: Array<{ used: number }> };
      return nodes.reduce((sum, node) => sum + node.used, 0);
    };
    await expect
      .poll(async () => {
        const totals = await Promise.all(fleet.map(shown));
        return totals.every((t) => t === totals[0] && t >= id) ? 'agree' : totals.join(' vs ');
      })
      .toBe('agree');
    for (const replica of fleet) {
      await expect
        .poll(async () => {
          const metrics = await (await fetch(`http://127.0.0.1:${replica.port}/metrics`)).text();
          return /^cascade_cluster_members (\d+)$/m.exec(metrics)?.[1];
        })
        .toBe(String(fleet.length));
    }
    // `docker compose down`: SIGTERM drains each replica, which exits 0.
    for (const proxy of proxies) expect(await proxy.stop('SIGTERM')).toBe(0);
  });
});
