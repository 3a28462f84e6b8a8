/**
 * examples/replicas read as data: two or more cascade replicas of basic_setup's proxy, each with
 * its own host name, port and usage volume, sharing limits and usage through the compose
 * file's Redis (no persistence, not published, healthy before the replicas start); the one
 * config they mount passes the real `cascade validate-config`. The schema and dclint checks of
 * every compose file are in compose.test.ts.
 */
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, assertBuilt, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { mountsOf, portsOf, readCompose, type ComposeService } from '../support/compose.js';
import { readImage } from '../support/dockerfile.js';

interface Config {
  server: { host: string; port: number; quotas_path?: string };
  cluster: {
    redis_url: string;
    key_prefix?: string;
    replica_id?: string;
    workers?: unknown;
    fallback_fraction?: number;
  };
  nodes: unknown[];
}

const image = readImage();
const compose = readCompose('examples/replicas/docker-compose.yml');
const basic = readCompose('examples/basic_setup/docker-compose.yml');
const configPath = image.env.CONFIG_PATH!;
/** The services that run the proxy: the image's `serve` (its CMD, or a command starting so). */
const proxies = Object.entries(compose.services).filter(
  ([, service]) => service.build !== undefined && (service.command?.[0] ?? 'serve') === 'serve',
);
const configSource = (service: ComposeService): string | undefined =>
  mountsOf(compose, service).find((m) => m.target === configPath)?.source;
const configFile = configSource(proxies[0]![1])!;
const configText = readFileSync(configFile, 'utf8');
const config = parseToml(configText) as unknown as Config;
const basicConfig = parseToml(
  readFileSync(configSource(basic.services.cascade!) ?? '', 'utf8'),
) as unknown as Config;
const redisUrl = new URL(config.cluster.redis_url);

beforeAll(() => assertBuilt());

describe('examples/replicas', () => {
  it('runs two or more replicas, each with its own host name, port and usage volume', () => {
    expect(proxies.length).toBeGreaterThanOrEqual(2);
    const hostnames = proxies.map(([, service]) => service.hostname);
    expect(new Set(hostnames).size, 'host names are the replica ids').toBe(proxies.length);
    expect(config.cluster.replica_id, 'one file for all: the id comes from the host').toBe(
      undefined,
    );
    const published = proxies.flatMap(([, service]) => portsOf(service));
    expect(published.map((p) => p.container)).toEqual(proxies.map(() => config.server.port));
    expect(new Set(published.map((p) => p.host)).size).toBe(proxies.length);
    const volumes = proxies.map(([, service]) => {
      const data = mountsOf(compose, service).find((m) => m.target === image.workdir);
      expect(data).toMatchObject({ bind: false, readOnly: false });
      return data!.source;
    });
    expect(new Set(volumes).size, 'a quotas.json is locked by its process').toBe(proxies.length);
    expect(config.server.quotas_path).toBeUndefined();
  });

  it("mounts one config into every replica and the mocks: basic_setup's server and nodes", () => {
    const mocks = compose.services.mocks!;
    for (const service of [...proxies.map(([, s]) => s), mocks]) {
      const mount = mountsOf(compose, service).find((m) => m.source === configFile);
      expect(mount).toMatchObject({ bind: true, readOnly: true });
    }
    for (const [, service] of proxies) expect(service.environment?.MOCKS_HOST).toBe('mocks');
    expect(mocks.command).toEqual(basic.services.mocks!.command);
    expect(mocks.environment).toEqual(basic.services.mocks!.environment);
    expect(config.nodes).toEqual(basicConfig.nodes);
    expect(config.server.host).toBe(basicConfig.server.host);
    expect(config.server.port).toBe(basicConfig.server.port);
  });

  it('shares limits and usage through the redis service: no persistence, not published', () => {
    expect(redisUrl.protocol).toBe('redis:');
    const redis = compose.services[redisUrl.hostname];
    expect(redis, `a service named ${redisUrl.hostname}`).toBeDefined();
    const patch = /^redis:7\.2\.(\d+)-alpine$/.exec(redis!.image ?? '')?.[1];
    expect(Number(patch), 'redis:7.2.11 or later (Lua CVE-2025-49844)').toBeGreaterThanOrEqual(11);
    expect(redisUrl.port).toBe('6379');
    expect(redis!.command?.join(' ')).toBe('redis-server --save  --appendonly no');
    expect(redis!.ports, 'only the replicas reach it').toBeUndefined();
    expect(redis!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(config.cluster.key_prefix).toMatch(/\S/);
  });

  it('starts each replica once Redis and the mocks are healthy, and gives it time to drain', () => {
    for (const [, service] of proxies) {
      expect(service.depends_on).toEqual({
        mocks: { condition: 'service_healthy' },
        [redisUrl.hostname]: { condition: 'service_healthy' },
      });
      expect(Number.parseInt(service.stop_grace_period ?? '0', 10)).toBeGreaterThan(10);
    }
  });

  it('keeps the fleet within each limit when Redis is lost: fallback_fraction × replicas ≤ 1', () => {
    const fraction = config.cluster.fallback_fraction ?? 1;
    expect(fraction * proxies.length).toBeLessThanOrEqual(1);
  });

  it('runs one replica as several workers (a flag, so the replicas can differ)', () => {
    const commands = proxies.map(([, service]) => service.command ?? image.cmd);
    expect(commands).toContainEqual(['serve']);
    const workers = commands.find((command) => command.includes('--workers'));
    expect(Number(workers?.[workers.indexOf('--workers') + 1])).toBeGreaterThanOrEqual(2);
    expect(config.cluster.workers).toBeUndefined();
  });

  it("passes `cascade validate-config` with the image's price lists", async () => {
    const temp = makeTempDir('cascade-replicas-config-');
    try {
      temp.write({ 'config.toml': configText.replaceAll('/app/', `${REPO_ROOT}/`) });
      const result = await runCli(['validate-config', '--config', temp.path('config.toml')], {
        env: { MOCKS_HOST: 'mocks' },
        cwd: temp.dir,
      });
      expect(result.stderr).not.toMatch(/error/i);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`OK, ${config.nodes.length} node(s)`);
    } finally {
      temp.cleanup();
    }
  });
});
