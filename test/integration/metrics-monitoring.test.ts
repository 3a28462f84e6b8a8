/**
 * The monitoring stack cannot run here (no Docker engine), so its files are checked as data:
 * valid YAML (prettier's YAML parser) and the facts that make the stack work together —
 * compose mounts what the provisioning files point at, the datasource uid is the one the
 * dashboard uses, Grafana's password has no default.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import { MONITORING_DIR, allPanels, loadDashboard } from '../support/dashboard.js';

type Yaml = string | null | Yaml[] | { [key: string]: Yaml };

interface Line {
  readonly indent: number;
  readonly text: string;
  readonly number: number;
}

function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

function scalar(text: string): string | null {
  const value = text.trim();
  if (value === '') return null;
  if (/^(['"]).*\1$/.test(value)) return value.slice(1, -1);
  if (/^[[{&*!|>]/.test(value)) throw new Error(`unsupported YAML value: ${value}`);
  return value;
}

/**
 * Reads the block-style YAML subset the monitoring files use (mappings, sequences, plain and
 * quoted scalars, comments) into plain values; throws on anything else or on duplicate keys.
 */
function readYaml(text: string): Yaml {
  const lines: Line[] = text
    .split('\n')
    .map((raw, i) => ({ raw: stripComment(raw).trimEnd(), number: i + 1 }))
    .filter(({ raw }) => raw.trim() !== '')
    .map(({ raw, number }) => {
      if (raw.includes('\t')) throw new Error(`line ${number}: tab`);
      return { indent: raw.length - raw.trimStart().length, text: raw.trim(), number };
    });
  let i = 0;
  const block = (indent: number): Yaml => {
    const first = lines[i];
    if (!first || first.indent < indent) return null;
    if (first.text === '-' || first.text.startsWith('- ')) return sequence(first.indent);
    return mapping(first.indent);
  };
  const sequence = (indent: number): Yaml[] => {
    const items: Yaml[] = [];
    while (lines[i]?.indent === indent && /^-( |$)/.test(lines[i]!.text)) {
      const line = lines[i]!;
      const rest = line.text.slice(1).trimStart();
      if (rest === '') {
        i++;
        items.push(block(indent + 1));
      } else if (/^[\w.-]+:( |$)/.test(rest)) {
        lines[i] = { ...line, indent: indent + 2, text: rest };
        items.push(mapping(indent + 2));
      } else {
        i++;
        items.push(scalar(rest));
      }
    }
    return items;
  };
  const mapping = (indent: number): Record<string, Yaml> => {
    const map: Record<string, Yaml> = {};
    while (lines[i]?.indent === indent) {
      const line = lines[i]!;
      const match = /^([\w.-]+):(?: (.*))?$/.exec(line.text);
      if (!match) throw new Error(`line ${line.number}: not "key: value": ${line.text}`);
      const key = match[1]!;
      if (key in map) throw new Error(`line ${line.number}: duplicate key ${key}`);
      i++;
      map[key] = match[2] !== undefined ? scalar(match[2]) : block(indent + 1);
    }
    return map;
  };
  const value = block(0);
  if (i < lines.length) throw new Error(`line ${lines[i]!.number}: unexpected indentation`);
  return value;
}

/** Reads a monitoring/ YAML file after checking its syntax with a full YAML parser. */
async function yamlFile(relative: string): Promise<Yaml> {
  const text = readFileSync(path.join(MONITORING_DIR, relative), 'utf8');
  await prettier.format(text, { parser: 'yaml' });
  return readYaml(text);
}

/** Walks `keys` into a YAML value; throws with the path when a key is missing. */
function at(value: Yaml, ...keys: Array<string | number>): Yaml {
  let current = value;
  for (const key of keys) {
    const next =
      current !== null && typeof current === 'object'
        ? (current as Record<string | number, Yaml>)[key]
        : undefined;
    if (next === undefined) throw new Error(`missing ${keys.join('.')}`);
    current = next;
  }
  return current;
}

function strings(value: Yaml): string[] {
  if (!Array.isArray(value)) throw new Error(`not a list: ${JSON.stringify(value)}`);
  return value.map((item) => {
    if (typeof item !== 'string') throw new Error(`not a string: ${JSON.stringify(item)}`);
    return item;
  });
}

/** `./host/path:/container/path[:ro]` volume entries as [host, container]. */
function mounts(service: Yaml): Array<[string, string]> {
  return strings(at(service, 'volumes')).map((entry) => {
    const [host, container] = entry.split(':');
    return [host!, container!];
  });
}

describe('monitoring/ (Prometheus + Grafana stack)', () => {
  it('reads its own YAML subset faithfully and refuses what it does not know', () => {
    expect(
      readYaml('a: 1\nb:\n  - x\n  - k: "v # not a comment"\n    j: w # comment\nc:\n  d: e\n'),
    ).toEqual({ a: '1', b: ['x', { k: 'v # not a comment', j: 'w' }], c: { d: 'e' } });
    expect(() => readYaml('a: 1\na: 2\n')).toThrow('duplicate key a');
    expect(() => readYaml('a: [1, 2]\n')).toThrow('unsupported');
    expect(() => readYaml('a: 1\n  b: 2\n')).toThrow('line 2');
  });

  it('prometheus.yml scrapes cascade on the Docker host every 5 s', async () => {
    const config = await yamlFile('prometheus.yml');
    expect(at(config, 'global', 'scrape_interval')).toBe('5s');
    const jobs = at(config, 'scrape_configs') as Yaml[];
    expect(jobs).toHaveLength(1);
    expect(at(jobs[0]!, 'job_name')).toBe('cascade');
    expect(at(jobs[0]!, 'metrics_path')).toBe('/metrics');
    expect(strings(at(jobs[0]!, 'static_configs', 0, 'targets'))).toEqual([
      'host.docker.internal:3000',
    ]);
  });

  it('docker-compose.yml runs Prometheus with host-gateway and Grafana with a required password', async () => {
    const compose = await yamlFile('docker-compose.yml');
    const prometheus = at(compose, 'services', 'prometheus');
    const grafana = at(compose, 'services', 'grafana');
    expect(at(prometheus, 'image')).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(at(grafana, 'image')).toMatch(/^grafana\/grafana(-oss)?:\d+\.\d+\.\d+$/);
    expect(strings(at(prometheus, 'extra_hosts'))).toContain('host.docker.internal:host-gateway');
    expect(mounts(prometheus)).toContainEqual([
      './prometheus.yml',
      '/etc/prometheus/prometheus.yml',
    ]);
    expect(at(grafana, 'environment', 'GF_SECURITY_ADMIN_PASSWORD')).toBe(
      '${GRAFANA_ADMIN_PASSWORD:?set GRAFANA_ADMIN_PASSWORD}',
    );
    const text = readFileSync(path.join(MONITORING_DIR, 'docker-compose.yml'), 'utf8');
    expect(text).not.toMatch(/GRAFANA_ADMIN_PASSWORD:?-/);
    expect(text).not.toMatch(/GF_SECURITY_ADMIN_PASSWORD: *[^$\s]/);
    for (const service of [prometheus, grafana]) {
      for (const [host] of mounts(service)) {
        if (host.startsWith('.'))
          expect(existsSync(path.join(MONITORING_DIR, host)), host).toBe(true);
      }
      for (const port of strings(at(service, 'ports'))) expect(port).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('provisions the datasource the dashboard uses and loads the dashboard folder compose mounts', async () => {
    const compose = await yamlFile('docker-compose.yml');
    const grafana = at(compose, 'services', 'grafana');
    const scrape = at(await yamlFile('prometheus.yml'), 'global', 'scrape_interval');
    const sources = at(
      await yamlFile('grafana/provisioning/datasources/prometheus.yml'),
      'datasources',
    );
    expect(sources).toHaveLength(1);
    const source = at(sources, 0);
    expect(at(source, 'type')).toBe('prometheus');
    expect(at(source, 'url')).toBe('http://prometheus:9090');
    expect(at(source, 'jsonData', 'timeInterval')).toBe(scrape);
    const uid = at(source, 'uid');
    for (const panel of allPanels(loadDashboard()).filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, panel.title).toBe(uid);
    }

    const provider = at(
      await yamlFile('grafana/provisioning/dashboards/cascade.yml'),
      'providers',
      0,
    );
    expect(at(provider, 'type')).toBe('file');
    const folder = at(provider, 'options', 'path');
    const dashboardsMount = mounts(grafana).find(([, container]) => container === folder);
    expect(dashboardsMount?.[0]).toBe('./grafana/dashboards');
    expect(mounts(grafana)).toContainEqual(['./grafana/provisioning', '/etc/grafana/provisioning']);
    expect(at(grafana, 'environment', 'GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH')).toBe(
      `${folder as string}/cascade.json`,
    );
  });

  it('README.md explains running the stack against cascade serve --demo', () => {
    const readme = readFileSync(path.join(MONITORING_DIR, 'README.md'), 'utf8');
    expect(readme).toContain('cascade serve --demo');
    expect(readme).toContain('GRAFANA_ADMIN_PASSWORD');
    expect(readme).toContain('docker compose');
  });
});
