/**
 * Every compose file against the Compose specification's JSON schema and dclint's rules
 * (dclint ships the schema and validates with ajv), then the facts that make the examples work
 * together: the ports, the shared config, the volume for usage, the Prometheus target, the
 * Grafana files reused from monitoring/. `promtool check config` on every Prometheus config.
 * Running the stacks needs Docker; test/e2e/examples.test.ts runs basic_setup's commands.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as dclint from 'dclint';
import { nodesOf } from '../support/config-nodes.js';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { COMPOSE_FILES, mountsOf, portsOf, readCompose } from '../support/compose.js';
import { readImage } from '../support/dockerfile.js';
import { onPath } from '../support/on-path.js';

/** What this test reads of dclint's API (its bundled types do not resolve under NodeNext). */
interface LintResult {
  readonly filePath: string;
  readonly messages: ReadonlyArray<{ type: string; line: number; message: string }>;
}
interface Linter {
  lintFiles(paths: string[], recursive: boolean): LintResult[];
}
// tsc sees an unresolved type without this assertion; typescript-eslint sees it as a no-op.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
const { DCLinter } = dclint as {
  DCLinter: new (config: {
    rules: Record<string, 0 | 1 | 2>;
    quiet: boolean;
    debug: boolean;
    exclude: string[];
  }) => Linter;
};

/** Key order and service order are style; every other rule stays on, warnings included. */
const LINTER = new DCLinter({
  rules: { 'service-keys-order': 0, 'services-alphabetical-order': 0 },
  quiet: false,
  debug: false,
  exclude: [],
});

function lint(files: string[]): string[] {
  return LINTER.lintFiles(files, false).flatMap((result) =>
    result.messages.map(
      (m) => `${path.relative(REPO_ROOT, result.filePath)}:${m.line} ${m.type} ${m.message}`,
    ),
  );
}

const basic = readCompose('examples/basic_setup/docker-compose.yml');
const full = readCompose('examples/full_observability/docker-compose.yml');
const monitoring = readCompose('monitoring/docker-compose.yml');
const image = readImage();
const cascade = basic.services.cascade!;
const mocks = basic.services.mocks!;
const configMount = mountsOf(basic, cascade).find((m) => m.target === image.env.CONFIG_PATH);
interface Config {
  server: { host: string; port: number; enable_metrics?: boolean; metrics_port?: number };
  nodes?: ConfigNode[];
  chains?: Array<{ nodes: ConfigNode[] }>;
}
interface ConfigNode {
  url: string;
  provider_pricing_path: string;
}
const configText = configMount ? readFileSync(configMount.source, 'utf8') : '';
const parsed = parseToml(configText) as unknown as Config;
const config = { ...parsed, nodes: nodesOf(parsed) };

let temp: TempDir | undefined;
afterEach(() => temp?.cleanup());

describe('compose files', () => {
  it('pass the Compose schema and dclint with no error or warning', () => {
    expect(lint(COMPOSE_FILES)).toEqual([]);
  });

  it('are checked for real: a key the specification lacks is an error', () => {
    temp = makeTempDir('cascade-compose-');
    temp.write({ 'docker-compose.yml': 'services:\n  cascade:\n    imagee: cascade-rpc\n' });
    expect(lint([temp.path('docker-compose.yml')]).join('\n')).toMatch(
      /error ComposeValidationError: .*must NOT have additional properties/,
    );
  });

  it('publish ports on 127.0.0.1 only; Grafana on 3002 (3001 is for the WebSocket listener)', () => {
    for (const compose of COMPOSE_FILES.map(readCompose)) {
      for (const service of Object.values(compose.services)) {
        for (const port of portsOf(service)) expect(port.ip).toBe('127.0.0.1');
      }
    }
    for (const compose of [full, monitoring]) {
      expect(portsOf(compose.services.grafana!)).toEqual([
        { ip: '127.0.0.1', host: 3002, container: 3000 },
      ]);
    }
  });
});

describe('examples/basic_setup', () => {
  it("mounts one config into both services, at the image's CONFIG_PATH", () => {
    expect(configMount).toMatchObject({ bind: true, readOnly: true });
    expect(existsSync(configMount!.source)).toBe(true);
    const mocksMount = mountsOf(basic, mocks).find((m) => m.source === configMount!.source);
    expect(mocksMount).toBeDefined();
    const command = mocks.command!;
    expect(command[0]).toBe('mock-nodes');
    expect(command[command.indexOf('--config') + 1]).toBe(mocksMount!.target);
    expect(command[command.indexOf('--host') + 1]).toBe('0.0.0.0');
    expect(cascade.command, "cascade runs the image's command").toBeUndefined();
    expect(image.cmd).toEqual(['serve']);
  });

  it('points the proxy at the mocks service by name, and mock-nodes at itself', () => {
    const hosts = new Set(config.nodes.map((node) => node.url));
    expect(hosts.size).toBe(config.nodes.length);
    for (const node of config.nodes) expect(node.url).toMatch(/^http:\/\/\$\{MOCKS_HOST\}:\d+$/);
    expect(cascade.environment?.MOCKS_HOST).toBe('mocks');
    expect(Object.keys(basic.services)).toContain('mocks');
    expect(mocks.environment?.MOCKS_HOST).toBe('127.0.0.1');
    expect(configText).not.toMatch(/api[-_]?key/i);
  });

  it('listens on all interfaces in the container and publishes the config port as 3000', () => {
    expect(config.server.host).toBe('0.0.0.0');
    expect(portsOf(cascade)).toEqual([
      { ip: '127.0.0.1', host: 3000, container: config.server.port },
    ]);
    expect(image.exposed).toEqual([String(config.server.port)]);
  });

  it('starts the proxy once the mocks are healthy, by the image HEALTHCHECK aimed at a mock', () => {
    expect(cascade.depends_on).toEqual({ mocks: { condition: 'service_healthy' } });
    const firstNode = /:(\d+)$/.exec(config.nodes[0]!.url)![1];
    expect(mocks.environment?.HEALTHCHECK_URL).toBe(`http://127.0.0.1:${firstNode}/health`);
    expect(image.healthcheck.cmd.join(' ')).toContain('process.env.HEALTHCHECK_URL');
  });

  it("keeps usage in a named volume at the image's working directory, with time to drain", () => {
    const data = mountsOf(basic, cascade).find((m) => m.target === image.workdir);
    expect(data).toMatchObject({ bind: false, readOnly: false });
    expect(configText).not.toMatch(/^\s*quotas_path/m);
    expect(Number.parseInt(cascade.stop_grace_period ?? '0', 10)).toBeGreaterThan(10);
  });

  it('reads price lists the image ships, by absolute path', () => {
    for (const node of config.nodes) {
      expect(node.provider_pricing_path).toMatch(/^\/app\/config\/provider_config\//);
      const shipped = node.provider_pricing_path.replace(/^\/app\//, '');
      expect(existsSync(path.join(REPO_ROOT, shipped)), shipped).toBe(true);
    }
  });
});

describe('examples/full_observability', () => {
  it('includes basic_setup and scrapes its cascade service on the config port', () => {
    expect(full.include.map((file) => path.resolve(full.dir, file))).toEqual([basic.file]);
    const prometheus = parseYaml(readFileSync(path.join(full.dir, 'prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>;
    };
    expect(prometheus.scrape_configs[0]!.static_configs[0]!.targets).toEqual([
      `cascade:${config.server.port}`,
    ]);
    expect(config.server.enable_metrics).toBe(true);
    expect(config.server.metrics_port).toBeUndefined();
    const mount = mountsOf(full, full.services.prometheus!).find((m) =>
      m.target.endsWith('prometheus.yml'),
    );
    expect(mount?.source).toBe(path.join(full.dir, 'prometheus.yml'));
  });

  it("provisions Grafana from monitoring/'s files, with a required password", () => {
    const grafana = full.services.grafana!;
    const mounts = mountsOf(full, grafana).filter((m) => m.bind);
    const ownMounts = mountsOf(monitoring, monitoring.services.grafana!).filter((m) => m.bind);
    expect(mounts).toEqual(ownMounts);
    for (const mount of mounts) expect(existsSync(mount.source), mount.source).toBe(true);
    expect(grafana.environment?.GF_SECURITY_ADMIN_PASSWORD).toBe(
      '${GRAFANA_ADMIN_PASSWORD:?set GRAFANA_ADMIN_PASSWORD}',
    );
    const copies = readdirSync(path.join(REPO_ROOT, 'examples'), { recursive: true }).filter(
      (file) => String(file).endsWith('.json'),
    );
    expect(copies, 'the dashboard is reused, not copied').toEqual([]);
  });
});

const PROMTOOL = onPath('promtool');
const PROMTOOL_NOTE = PROMTOOL
  ? ''
  : " (skipped: promtool not on PATH — install Debian's prometheus package)";

describe.skipIf(!PROMTOOL)(`promtool check config${PROMTOOL_NOTE}`, () => {
  it.each(['examples/full_observability/prometheus.yml', 'monitoring/prometheus.yml'])(
    '%s',
    (file) => {
      const result = spawnSync(PROMTOOL!, ['check', 'config', path.join(REPO_ROOT, file)], {
        encoding: 'utf8',
        timeout: 15_000,
      });
      expect(result.status, `${result.stdout}${result.stderr}`).toBe(0);
    },
  );
});
