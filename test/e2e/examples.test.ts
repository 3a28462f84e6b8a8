/**
 * examples/basic_setup runs for real, outside containers: this test reads its compose file and
 * runs each service's command line (the image's `cascade` entrypoint, the service's command or
 * the image's CMD, the image's and the service's environment) with the built CLI, and proves a
 * request flows through cascade to the mocks, /health is ok, the image's HEALTHCHECK passes,
 * SIGHUP reloads and SIGTERM drains, leaving usage in the data volume. If the example rots,
 * this fails.
 *
 * The container world becomes the host's by a few consistent rewrites, nothing else:
 * - ports: every port of the compose file's config (the proxy's and each node's) becomes a free
 *   one, in the config mounted into both services and in the HEALTHCHECK, so the test never
 *   needs 3000 or 8891 free (busy machines, parallel runs) and still proves the two services
 *   agree, because they read the same rewritten file;
 * - paths: /app (the image's package directory) is the repository, each bind mount its file,
 *   each named volume a temp dir (the image's working directory among them);
 * - addresses: 0.0.0.0 binds become 127.0.0.1 (tests bind loopback only), and a service name
 *   used as a host (MOCKS_HOST=mocks) becomes 127.0.0.1.
 * Where `unshare` can make a PID namespace, cascade runs as PID 1 as in a container: the kernel
 * then ignores any signal PID 1 has no handler for, so SIGHUP and SIGTERM working shows that
 * cascade's own handlers suffice (no --init or tini needed).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT, assertBuilt } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import {
  hostRun,
  mountsOf,
  pathMapper,
  portMapper,
  readCompose,
  type ComposeFile,
} from '../support/compose.js';
import { readImage } from '../support/dockerfile.js';
import { freePort } from '../support/free-port.js';
import { childPid, postJson, unsharePidNamespace } from '../support/processes.js';
import { nodesOf } from '../support/config-nodes.js';

const compose = readCompose('examples/basic_setup/docker-compose.yml');
const image = readImage();
const PID1 = unsharePidNamespace();
const PID1_NOTE = PID1 ? 'as PID 1' : '(not as PID 1: unshare --pid is not available here)';

let temp: TempDir | undefined;
const processes: CliProcess[] = [];
beforeAll(() => assertBuilt());
afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop('SIGKILL')));
  temp?.cleanup();
});

/** The config file the services mount, and every port number it holds. */
function configPorts(file: string): number[] {
  const config = parseToml(readFileSync(file, 'utf8')) as {
    server: { port: number };
    nodes?: Array<{ url: string }>;
    chains?: Array<{ nodes: Array<{ url: string }> }>;
  };
  const nodes = nodesOf(config);
  return [config.server.port, ...nodes.map((node) => Number(/:(\d+)$/.exec(node.url)![1]))];
}

/** Lays the compose file's mounts out in `temp` and returns the container → host rewrite. */
async function hostWorld(
  file: ComposeFile,
  dir: TempDir,
): Promise<{
  rewrite: (text: string) => string;
  ports: Map<number, number>;
  volumes: Map<string, string>;
}> {
  const mounts = Object.values(file.services).flatMap((service) => mountsOf(file, service));
  const ports = new Map<number, number>();
  for (const mount of mounts.filter((m) => m.bind && m.source.endsWith('.toml'))) {
    for (const port of configPorts(mount.source)) {
      if (!ports.has(port)) ports.set(port, await freePort());
    }
  }
  const toPorts = portMapper(ports);
  const paths: Record<string, string> = { '/app': REPO_ROOT };
  const volumes = new Map<string, string>();
  for (const mount of mounts) {
    if (mount.bind) {
      const copy = dir.path(`binds/${path.basename(mount.source)}`);
      paths[mount.target] = copy;
    } else {
      const volume = dir.path(`volumes/${mount.source}`);
      mkdirSync(volume, { recursive: true });
      paths[mount.target] = volume;
      volumes.set(mount.source, volume);
    }
  }
  const toPaths = pathMapper(paths);
  const rewrite = (text: string): string =>
    toPorts(toPaths(text)).replaceAll('0.0.0.0', '127.0.0.1');
  for (const mount of mounts.filter((m) => m.bind)) {
    mkdirSync(dir.path('binds'), { recursive: true });
    const copy = paths[mount.target]!;
    if (mount.source.endsWith('.toml')) {
      writeFileSync(copy, rewrite(readFileSync(mount.source, 'utf8')));
    } else copyFileSync(mount.source, copy);
  }
  return { rewrite, ports, volumes };
}

describe(`examples/basic_setup, its commands run on the host ${PID1_NOTE}`, () => {
  it('serves a request through cascade from the mocks; health ok; HUP reloads; TERM drains', async () => {
    temp = makeTempDir('cascade-example-');
    const world = await hostWorld(compose, temp);
    const mocksRun = hostRun(compose, 'mocks', image, world.rewrite);
    const cascadeRun = hostRun(compose, 'cascade', image, world.rewrite);
    expect(cascadeRun.args).toEqual(['serve']);

    const mocks = startCli(mocksRun.args, { env: mocksRun.env, cwd: mocksRun.cwd });
    processes.push(mocks);
    await mocks.waitFor(/mock node\(s\) running/);

    const launcher = [...(PID1 ?? []), process.execPath, CLI_PATH];
    const cascade = startCli(cascadeRun.args, {
      env: cascadeRun.env,
      cwd: cascadeRun.cwd,
      launcher,
    });
    processes.push(cascade);
    await cascade.waitFor(/cascade serving/);
    const pid = PID1 ? await childPid(cascade.child.pid!) : cascade.child.pid!;
    if (PID1) expect(cascade.output()).toMatch(/"pid":1\b/);

    const [proxyPort, ...nodePorts] = [...world.ports.values()];
    const answer = await postJson(`http://127.0.0.1:${proxyPort}/`, {
      jsonrpc: '2.0',
      id: 7,
      method: 'getBalance',
      params: ['11111111111111111111111111111111'],
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 7, result: expect.anything() });
    let served = 0;
    for (const port of nodePorts) {
      const stats = (await (await fetch(`http://127.0.0.1:${port}/__stats`)).json()) as {
        requests: number;
      };
      served += stats.requests;
    }
    expect(served, 'one mock served it').toBe(1);

    const health = (await (await fetch(`http://127.0.0.1:${proxyPort}/health`)).json()) as {
      status: string;
      total_nodes: number;
    };
    expect(health).toMatchObject({ status: 'ok', total_nodes: nodePorts.length });

    // The image's HEALTHCHECK, with each service's environment (the mocks point it at a mock).
    for (const service of [mocksRun, cascadeRun]) {
      const [node, ...check] = image.healthcheck.cmd.map(world.rewrite);
      expect(node).toBe('node');
      const probe = spawnSync(process.execPath, check, {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, HEALTHCHECK_URL: undefined, ...service.env },
      });
      expect(probe.status, `HEALTHCHECK: ${probe.stderr}`).toBe(0);
    }

    // `docker kill -s HUP` after editing the mounted config: one node changed.
    const mounted = world.rewrite(image.env.CONFIG_PATH!);
    const edited = readFileSync(mounted, 'utf8').replace(/rps_limit = (\d+)/, 'rps_limit = 1$1');
    writeFileSync(mounted, edited);
    process.kill(pid, 'SIGHUP');
    await cascade.waitFor(/config reloaded: \+0 -0 ~1/);
    process.kill(pid, 'SIGTERM');
    expect(await cascade.exited()).toBe(0);
    expect(await mocks.stop('SIGTERM')).toBe(0);

    // Usage is in the named volume mounted at the image's working directory.
    const data = world.volumes.get(
      mountsOf(compose, compose.services.cascade!).find((m) => m.target === image.workdir)!.source,
    )!;
    expect(readdirSync(data)).toEqual(['quotas.json']);
    const usage = JSON.parse(readFileSync(path.join(data, 'quotas.json'), 'utf8')) as Record<
      string,
      { used: number }
    >;
    // getBalance costs 1 credit on the Helius price list of the tier-0 nodes.
    expect((usage['Helius-1']?.used ?? 0) + (usage['Helius-2']?.used ?? 0)).toBe(1);
  });
});
