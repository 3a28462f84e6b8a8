/**
 * examples/kubernetes parsed with `yaml` and held to the config its ConfigMap mounts: the
 * container port, the probes, the Service, the scrape annotations, the mounts, the usage file
 * and the image's user agree with config.toml; every price list it names is in the ConfigMap
 * and identical to config/provider_config/; and the real `cascade validate-config` accepts the
 * ConfigMap's files laid out as the pod sees them. No cluster runs here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { nodesOf } from '../support/config-nodes.js';
import { parse as parseToml } from 'smol-toml';
import { parseAllDocuments } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, assertBuilt, runCli } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { readImage } from '../support/dockerfile.js';

const DIR = path.join(REPO_ROOT, 'examples/kubernetes');

interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  image: string;
  args?: string[];
  env?: Array<{ name: string; value: string }>;
  envFrom?: Array<{ secretRef?: { name: string } }>;
  ports: Array<{ name: string; containerPort: number }>;
  readinessProbe: Probe;
  livenessProbe: Probe;
  resources: { requests: { cpu: string; memory: string }; limits?: Record<string, string> };
  securityContext: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
  volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean; subPath?: string }>;
}
interface Resource {
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec: {
    replicas?: number;
    strategy?: { type: string };
    accessModes?: string[];
    selector?: Record<string, unknown>;
    ports?: Array<{ port: number; targetPort: string | number }>;
    template?: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        securityContext: { runAsUser: number; fsGroup: number; runAsNonRoot: boolean };
        terminationGracePeriodSeconds: number;
        containers: Container[];
        volumes: Array<{
          name: string;
          configMap?: { name: string };
          persistentVolumeClaim?: { claimName: string };
        }>;
      };
    };
  };
}

const resources: Resource[] = ['cascade.yaml', 'configmap.yaml'].flatMap((file) =>
  parseAllDocuments(readFileSync(path.join(DIR, file), 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return doc.toJS() as Resource;
  }),
);
const find = (kind: string): Resource => {
  const matches = resources.filter((r) => r.kind === kind);
  if (matches.length !== 1) throw new Error(`expected one ${kind}, found ${matches.length}`);
  return matches[0]!;
};
const deployment = find('Deployment');
const pod = deployment.spec.template!;
const container = pod.spec.containers[0]!;
const configMap = find('ConfigMap');
const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));
const configPath = env.CONFIG_PATH!;
/** The mount and volume that hold `file` in the pod. */
function volumeAt(file: string) {
  const mount = container.volumeMounts
    .filter((m) => file.startsWith(`${m.mountPath}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  const volume = pod.spec.volumes.find((v) => v.name === mount?.name);
  return { mount, volume };
}
interface Config {
  server: {
    host: string;
    port: number;
    enable_metrics?: boolean;
    metrics_port?: number;
    keep_alive_timeout_ms?: number;
    trusted_proxies?: string[];
  };
  nodes?: ConfigNode[];
  chains?: Array<{ nodes: ConfigNode[] }>;
}
interface ConfigNode {
  name: string;
  url: string;
  provider_pricing_path: string;
}
const configKey = path.basename(configPath);
const configText = configMap.data?.[configKey] ?? '';
const parsed = parseToml(configText) as unknown as Config & {
  server: { quotas_path?: string };
};
/** The example serves several chains: every chain's nodes (or the top-level ones). */
const config = {
  ...parsed,
  nodes: nodesOf(parsed),
};
const image = readImage();
/** The variables the node URLs name (the Secret must hold them). */
const urlVariables = [
  ...new Set(config.nodes.flatMap((n) => [...n.url.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!))),
];

let temp: TempDir | undefined;
beforeAll(() => assertBuilt());
afterEach(() => temp?.cleanup());

describe('examples/kubernetes', () => {
  it('runs one replica of the image, recreated (never two processes on one usage file)', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy?.type).toBe('Recreate');
    expect(readFileSync(path.join(DIR, 'cascade.yaml'), 'utf8')).toMatch(/shared state/);
    const version = (
      JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    expect(container.image).toBe(`cascade-rpc:${version}`);
    expect(container.args).toEqual(image.cmd);
  });

  it('mounts config.toml from the ConfigMap at CONFIG_PATH', () => {
    const { mount, volume } = volumeAt(configPath);
    expect(mount?.readOnly).toBe(true);
    expect(mount?.subPath, 'a subPath mount never sees ConfigMap updates').toBeUndefined();
    expect(volume?.configMap?.name).toBe(configMap.metadata.name);
    expect(configText).toContain('[server]');
  });

  it('serves the config port: container port, probes on /health, Service, scrape annotations', () => {
    expect(config.server.host).toBe('0.0.0.0');
    const port = container.ports.find((p) => p.containerPort === config.server.port);
    expect(port).toBeDefined();
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      expect(probe.httpGet.path).toBe('/health');
      expect([port!.name, port!.containerPort]).toContain(probe.httpGet.port);
    }
    const service = find('Service');
    expect(service.spec.selector).toEqual(pod.metadata.labels);
    expect([port!.name, port!.containerPort]).toContain(service.spec.ports![0]!.targetPort);
    const annotations = pod.metadata.annotations;
    expect(annotations['prometheus.io/scrape']).toBe('true');
    expect(annotations['prometheus.io/port']).toBe(String(config.server.port));
    expect(annotations['prometheus.io/path']).toBe('/metrics');
    expect(config.server.enable_metrics).toBe(true);
    expect(config.server.metrics_port, 'the metrics listener is loopback only').toBeUndefined();
  });

  it('keeps idle connections longer than a balancer or ingress does (no intermittent 502s)', () => {
    // AWS ALB and nginx idle 60 s: cascade must not close a connection they may still reuse.
    expect(config.server.keep_alive_timeout_ms).toBeGreaterThan(60_000);
    expect(config.server.trusted_proxies?.length).toBeGreaterThan(0);
  });

  it('keeps quotas.json on the PersistentVolumeClaim, writable by the image user', () => {
    const quotas = config.server.quotas_path ?? path.posix.join(image.workdir, 'quotas.json');
    const { mount, volume } = volumeAt(quotas);
    expect(mount?.readOnly).not.toBe(true);
    const claim = find('PersistentVolumeClaim');
    expect(volume?.persistentVolumeClaim?.claimName).toBe(claim.metadata.name);
    expect(claim.spec.accessModes).toEqual(['ReadWriteOnce']);
    expect(pod.spec.securityContext).toMatchObject({ runAsUser: 1000, fsGroup: 1000 });
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    // Drain (10 s) plus the final write fit in the grace period.
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(10);
  });

  it('holds every price list the config names, identical to config/provider_config/', () => {
    expect(config.nodes.length).toBeGreaterThan(0);
    for (const node of config.nodes) {
      const { volume } = volumeAt(node.provider_pricing_path);
      expect(volume?.configMap?.name, node.provider_pricing_path).toBe(configMap.metadata.name);
      const key = path.basename(node.provider_pricing_path);
      expect(configMap.data?.[key], key).toBe(
        readFileSync(path.join(REPO_ROOT, 'config/provider_config', key), 'utf8'),
      );
    }
  });

  it('takes the keys the node URLs name from a Secret, and sizes requests without a CPU limit', () => {
    expect(container.envFrom?.[0]?.secretRef?.name).toBe('cascade-keys');
    const readme = readFileSync(path.join(DIR, 'README.md'), 'utf8');
    expect(urlVariables).toEqual(['HELIUS_API_KEY', 'ALCHEMY_API_KEY']);
    for (const name of urlVariables) {
      expect(readme, `README creates ${name}`).toContain(`--from-literal=${name}=`);
    }
    expect(container.resources.requests).toEqual({ cpu: '250m', memory: '192Mi' });
    expect(container.resources.limits?.cpu).toBeUndefined();
  });

  it('passes `cascade validate-config` with its files where the pod sees them', async () => {
    temp = makeTempDir('cascade-k8s-');
    const mountPath = volumeAt(configPath).mount!.mountPath;
    // The ConfigMap's files in a temp dir standing for its mount path; the same paths in the config.
    temp.write(configMap.data!);
    const local = configText.replaceAll(`${mountPath}/`, `${temp.dir}/`);
    temp.write({ [configKey]: local });
    const keys = Object.fromEntries(urlVariables.map((name) => [name, 'test-key']));
    const result = await runCli(['validate-config', '--config', temp.path(configKey)], {
      env: keys,
      cwd: temp.dir,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    for (const node of config.nodes) expect(result.stdout).toContain(node.name);
    expect(result.stdout).not.toContain('test-key');
  });
});
