/**
 * examples/kubernetes/replicas parsed with `yaml`, against ../: the StatefulSet's pod is the
 * one-replica Deployment's (same container, probes, security, annotations) but with one usage
 * claim per pod; the Service clients use is unchanged; config.toml is the one-replica config
 * plus [cluster], whose redis_url names the Service of the single, Recreate-updated Redis;
 * config and price lists are projected where the config names them, and the real
 * `cascade validate-config` accepts them laid out as the pod sees them. No cluster runs here.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { nodesOf } from '../support/config-nodes.js';
import { parse as parseToml } from 'smol-toml';
import { parseAllDocuments } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, assertBuilt, runCli } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';

const BASE = path.join(REPO_ROOT, 'examples/kubernetes');
const DIR = path.join(BASE, 'replicas');

interface Container {
  image: string;
  args?: string[];
  env?: Array<{ name: string; value: string }>;
  ports: Array<{ name: string; containerPort: number }>;
  volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  [key: string]: unknown;
}
interface ConfigMapProjection {
  configMap: { name: string; items?: Array<{ key: string; path: string }> };
}
interface PodSpec {
  containers: Container[];
  volumes: Array<{
    name: string;
    configMap?: { name: string };
    projected?: { sources: ConfigMapProjection[] };
    emptyDir?: object;
  }>;
  [key: string]: unknown;
}
interface Resource {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec: {
    replicas?: number;
    strategy?: { type: string };
    podManagementPolicy?: string;
    serviceName?: string;
    clusterIP?: string;
    selector?: { matchLabels?: Record<string, string> } & Record<string, unknown>;
    ports?: Array<{ name: string; port: number; targetPort: string | number }>;
    template?: { metadata: Record<string, unknown> & { labels: Record<string, string> } } & {
      spec: PodSpec;
    };
    volumeClaimTemplates?: Array<{ metadata: { name: string }; spec: { accessModes: string[] } }>;
  };
}
interface Config {
  server: Record<string, unknown> & { quotas_path?: string };
  cluster?: { redis_url: string; replica_id?: string; fallback_fraction?: number };
  nodes?: ConfigNode[];
  chains?: Array<{ name: string; paths?: string[]; nodes: ConfigNode[] }>;
  accounts?: unknown[];
}
interface ConfigNode {
  name: string;
  url: string;
  provider_pricing_path: string;
}

function load(dir: string, files: readonly string[]): Resource[] {
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(dir, file), 'utf8')).map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      return doc.toJS() as Resource;
    }),
  );
}
const replicaFiles = readdirSync(DIR).filter((file) => file.endsWith('.yaml'));
const ours = load(DIR, replicaFiles);
const base = load(BASE, ['cascade.yaml', 'configmap.yaml']);
function one(from: Resource[], kind: string, name?: string): Resource {
  const found = from.filter((r) => r.kind === kind && (!name || r.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name ?? ''}: ${found.length}`);
  return found[0]!;
}
const set = one(ours, 'StatefulSet');
const pod = set.spec.template!;
const container = pod.spec.containers[0]!;
const baseDeployment = one(base, 'Deployment');
const basePod = baseDeployment.spec.template!;
const baseConfigMap = one(base, 'ConfigMap');
const configMap = one(ours, 'ConfigMap');
/** A config with its nodes listed flat, whether written as [[nodes]] or under [[chains]]. */
function readConfig(text: string): Config & { nodes: ConfigNode[] } {
  const parsed = parseToml(text) as unknown as Config;
  return { ...parsed, nodes: nodesOf(parsed) };
}
const config = readConfig(configMap.data!['config.toml']!);
const baseConfig = readConfig(baseConfigMap.data!['config.toml']!);
const redisUrl = new URL(config.cluster!.redis_url);
const configPath = container.env!.find((e) => e.name === 'CONFIG_PATH')!.value;
const configVolume = pod.spec.volumes.find(
  (v) =>
    v.name === container.volumeMounts.find((m) => m.mountPath === path.dirname(configPath))?.name,
);

let temp: TempDir | undefined;
beforeAll(() => assertBuilt());
afterEach(() => temp?.cleanup());

describe('examples/kubernetes/replicas', () => {
  it('runs two or more replicas of the one-replica pod, in parallel, spread over machines', () => {
    expect(set.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(set.spec.podManagementPolicy).toBe('Parallel');
    expect(pod.metadata).toEqual(basePod.metadata);
    const { affinity, volumes: _volumes, containers: _containers, ...rest } = pod.spec;
    const { volumes: _baseVolumes, containers, ...baseRest } = basePod.spec;
    expect(rest, 'security context, grace period').toEqual(baseRest);
    expect(affinity).toBeDefined();
    expect(container, 'image, args, env, probes, resources, mounts').toEqual(containers[0]);
  });

  it('keeps each replica’s quotas.json on its own claim (one usage file per process)', () => {
    expect(config.server.quotas_path).toBe(baseConfig.server.quotas_path);
    const dataMount = container.volumeMounts.find(
      (m) => m.mountPath === path.posix.dirname(config.server.quotas_path!),
    );
    expect(dataMount?.readOnly).not.toBe(true);
    expect(
      pod.spec.volumes.find((v) => v.name === dataMount?.name),
      'not a shared volume',
    ).toBe(undefined);
    const claim = set.spec.volumeClaimTemplates?.find((c) => c.metadata.name === dataMount?.name);
    expect(claim?.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(config.cluster?.replica_id, 'unset: each pod is "<pod name>:<pid>"').toBeUndefined();
  });

  it('serves clients through the same Service, and governs pod names by a headless one', () => {
    const service = one(ours, 'Service', 'cascade');
    expect(service).toEqual(one(base, 'Service', 'cascade'));
    expect(service.spec.selector).toEqual(pod.metadata.labels);
    const governing = one(ours, 'Service', set.spec.serviceName);
    expect(governing.spec.clusterIP).toBe('None');
    expect(governing.spec.selector).toEqual(pod.metadata.labels);
  });

  it('has the one-replica config plus [cluster]: same server, same nodes', () => {
    expect(config.server).toEqual(baseConfig.server);
    expect(config.nodes).toEqual(baseConfig.nodes);
    expect(config.chains).toEqual(baseConfig.chains);
    expect(config.accounts).toEqual(baseConfig.accounts);
    const fraction = config.cluster?.fallback_fraction ?? 1;
    expect(fraction * set.spec.replicas!, 'replicas cut off from Redis stay within limits').toBe(1);
  });

  it('points redis_url at the Service of one Redis, updated by Recreate, keeping nothing', () => {
    expect(redisUrl.protocol).toBe('redis:');
    const service = one(ours, 'Service', redisUrl.hostname);
    expect(service.spec.ports?.map((p) => p.port)).toEqual([Number(redisUrl.port)]);
    const redis = one(ours, 'Deployment');
    expect(redis.spec.replicas, 'two Redis would split the fleet').toBe(1);
    expect(redis.spec.strategy?.type).toBe('Recreate');
    const labels = redis.spec.template!.metadata.labels;
    expect(service.spec.selector).toEqual(labels);
    expect(pod.metadata.labels).not.toEqual(labels);
    const server = redis.spec.template!.spec.containers[0]!;
    const patch = /^redis:7\.2\.(\d+)-alpine$/.exec(server.image)?.[1];
    expect(Number(patch), 'redis:7.2.11 or later (Lua CVE-2025-49844)').toBeGreaterThanOrEqual(11);
    expect(server.args).toEqual(['redis-server', '--save', '', '--appendonly', 'no']);
    const port = server.ports.find((p) => p.containerPort === Number(redisUrl.port));
    expect([port?.name, port?.containerPort]).toContain(service.spec.ports![0]!.targetPort);
  });

  it("projects config.toml and the base ConfigMap's price lists where the config names them", () => {
    const sources = configVolume?.projected?.sources ?? [];
    const files = new Map<string, string>();
    for (const { configMap: source } of sources) {
      const map = source.name === configMap.metadata.name ? configMap : baseConfigMap;
      expect(map.metadata.name).toBe(source.name);
      const items = source.items ?? Object.keys(map.data!).map((key) => ({ key, path: key }));
      for (const item of items) {
        expect(map.data![item.key], `${source.name} has ${item.key}`).toBeDefined();
        expect(files.has(item.path), `${item.path} projected twice`).toBe(false);
        files.set(item.path, map.data![item.key]!);
      }
    }
    expect(files.get(path.basename(configPath))).toBe(configMap.data!['config.toml']);
    for (const node of config.nodes) {
      expect(path.dirname(node.provider_pricing_path)).toBe(path.dirname(configPath));
      expect(files.has(path.basename(node.provider_pricing_path)), node.name).toBe(true);
    }
  });

  it('passes `cascade validate-config` with its files where the pod sees them', async () => {
    temp = makeTempDir('cascade-k8s-replicas-');
    const mountPath = path.dirname(configPath);
    temp.write(baseConfigMap.data!);
    const local = configMap.data!['config.toml']!.replaceAll(`${mountPath}/`, `${temp.dir}/`);
    temp.write({ 'config.toml': local });
    const result = await runCli(['validate-config', '--config', temp.path('config.toml')], {
      env: { HELIUS_API_KEY: 'test-key', ALCHEMY_API_KEY: 'test-key' },
      cwd: temp.dir,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const node of config.nodes) expect(result.stdout).toContain(node.name);
    expect(result.stdout).not.toContain('test-key');
  });
});
