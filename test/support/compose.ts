/**
 * Docker Compose files as data (parsed with `yaml`), and the host's view of a service: what
 * its command line, environment and files become when it runs outside a container. The e2e
 * test of examples/basic_setup runs the services that way, so the example cannot rot.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '../helpers/run-cli.js';

/** The compose files the repository ships. */
export const COMPOSE_FILES = [
  'examples/basic_setup/docker-compose.yml',
  'examples/full_observability/docker-compose.yml',
  'monitoring/docker-compose.yml',
].map((file) => path.join(REPO_ROOT, file));

/** The parts of a service the tests read. */
export interface ComposeService {
  readonly build?: string;
  readonly image?: string;
  readonly command?: string[];
  readonly environment?: Record<string, string>;
  readonly volumes?: string[];
  readonly ports?: string[];
  readonly depends_on?: string[] | Record<string, { condition?: string }>;
  readonly stop_grace_period?: string;
}

/** A compose file: its services and where it lives. */
export interface ComposeFile {
  readonly file: string;
  readonly dir: string;
  readonly include: readonly string[];
  readonly services: Readonly<Record<string, ComposeService>>;
}

/** Reads a compose file (path relative to the repository root or absolute). */
export function readCompose(file: string): ComposeFile {
  const absolute = path.resolve(REPO_ROOT, file);
  const doc = parse(readFileSync(absolute, 'utf8')) as {
    include?: string[];
    services?: Record<string, ComposeService>;
  };
  return {
    file: absolute,
    dir: path.dirname(absolute),
    include: doc.include ?? [],
    services: doc.services ?? {},
  };
}

/** One entry of `volumes:`: a bind mount (source is a path) or a named volume. */
export interface Mount {
  readonly source: string;
  readonly target: string;
  readonly bind: boolean;
  readonly readOnly: boolean;
}

/** Parses the short syntax `SOURCE:TARGET[:ro]`; a bind mount's source is made absolute. */
export function mountsOf(compose: ComposeFile, service: ComposeService): Mount[] {
  return (service.volumes ?? []).map((entry) => {
    const [source = '', target = '', mode] = entry.split(':');
    const bind = source.startsWith('.') || source.startsWith('/');
    return {
      source: bind ? path.resolve(compose.dir, source) : source,
      target,
      bind,
      readOnly: mode === 'ro',
    };
  });
}

/** One `ports:` entry `[IP:]HOST:CONTAINER`. */
export interface PortMapping {
  readonly ip: string | undefined;
  readonly host: number;
  readonly container: number;
}

/** Parses a service's published ports. */
export function portsOf(service: ComposeService): PortMapping[] {
  return (service.ports ?? []).map((entry) => {
    const parts = entry.split(':');
    const container = Number(parts.at(-1));
    const host = Number(parts.at(-2));
    return { ip: parts.length === 3 ? parts[0] : undefined, host, container };
  });
}

/**
 * Replaces container paths by host paths, longest container path first, in any text (an
 * argument, an environment value, a config file).
 */
export function pathMapper(table: Readonly<Record<string, string>>): (text: string) => string {
  const entries = Object.entries(table).sort(([a], [b]) => b.length - a.length);
  return (text) => {
    let out = '';
    let i = 0;
    outer: while (i < text.length) {
      // Only where a path starts: not inside a URL or another path.
      const boundary = i === 0 || !/[\w./:-]/.test(text[i - 1]!);
      for (const [from, to] of boundary ? entries : []) {
        if (text.startsWith(from, i) && !/[\w.-]/.test(text[i + from.length] ?? '')) {
          out += to;
          i += from.length;
          continue outer;
        }
        if (text.startsWith(`${from}/`, i)) {
          out += to;
          i += from.length;
          continue outer;
        }
      }
      out += text[i];
      i++;
    }
    return out;
  };
}

/** Rewrites listed port numbers where they stand as ports: `:PORT` and `port = PORT`. */
export function portMapper(ports: ReadonlyMap<number, number>): (text: string) => string {
  return (text) =>
    text
      .replace(/:(\d{2,5})\b/g, (match, port: string) => {
        const to = ports.get(Number(port));
        return to === undefined ? match : `:${to}`;
      })
      .replace(/^(\s*port\s*=\s*)(\d+)/gm, (match, head: string, port: string) => {
        const to = ports.get(Number(port));
        return to === undefined ? match : `${head}${to}`;
      });
}

/** How a service runs on the host: its command line, environment and working directory. */
export interface HostRun {
  /** The command line after the image's `cascade` entrypoint. */
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
}

/** The image facts a service's host run needs. */
export interface ImageDefaults {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly workdir: string;
}

/**
 * A service's command line (its `command`, else the image's CMD, after the `cascade`
 * entrypoint), environment (the image's, then the service's) and working directory with
 * `rewrite` applied to each, and every other service's name used as a value (a host name in
 * MOCKS_HOST=mocks) replaced by 127.0.0.1.
 */
export function hostRun(
  compose: ComposeFile,
  name: string,
  image: ImageDefaults,
  rewrite: (text: string) => string,
): HostRun {
  const service = compose.services[name];
  if (!service) throw new Error(`no service ${name} in ${compose.file}`);
  if (image.entrypoint.join(' ') !== 'cascade') {
    throw new Error(`the image's entrypoint is ${JSON.stringify(image.entrypoint)}, not cascade`);
  }
  const hosts = new Set(Object.keys(compose.services));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...image.env, ...service.environment })) {
    env[key] = hosts.has(String(value)) ? '127.0.0.1' : rewrite(String(value));
  }
  return {
    args: (service.command ?? [...image.cmd]).map(rewrite),
    env,
    cwd: rewrite(image.workdir),
  };
}
