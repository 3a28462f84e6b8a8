/**
 * The one config loader every command shares: locate → read → parse → check shape → apply
 * defaults → cross-field rules → load every price list. It collects every problem in one pass
 * and never throws on bad input; `config` is present only when there are no errors.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { parse } from 'smol-toml';
import { MethodRegistry } from '../protocol/method-registry.js';
import { readCacheSection } from './cache-section.js';
import { checkKeyExposure, checkKeyLimitsScope } from './key-exposure.js';
import { readKeysSection } from './keys-section.js';
import { readClusterSection } from './cluster-section.js';
import { closestMatch } from './did-you-mean.js';
import { readAccountsSection, writtenAccountNames } from './accounts-section.js';
import { readChainsSection } from './chains-section.js';
import type { NamedNode } from './node-section.js';
import { checkAccountLinks, checkKeyChains } from './config-chains.js';
import {
  checkNodeNames,
  readNodeEntries,
  resolveNodes,
  type NodeListContext,
} from './node-list.js';
import { ProblemList } from './problem-list.js';
import { readRoutingSection } from './routing-section.js';
import { readServerSection } from './server-section.js';
import type { ChainConfig, LoadResult, NodeConfig, RoutingConfig } from './types.js';

/** Where the config is looked for when neither --config nor CONFIG_PATH is given. */
export const DEFAULT_CONFIG_PATH = 'config/balancer_config/config.toml';
const TOP_LEVEL_KEYS: readonly string[] = [
  'server',
  'nodes',
  'cluster',
  'routing',
  'cache',
  'keys',
  'keys_file',
  'chains',
  'accounts',
];

/** Inputs of one load. */
export interface LoadConfigOptions {
  /** `--config PATH`; wins over CONFIG_PATH. */
  readonly configPath?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** Base for relative paths (config, price lists). Default: process.cwd(). */
  readonly cwd?: string;
  /** Method ids persist across reloads: pass the running server's registry. */
  readonly registry?: MethodRegistry;
  /**
   * Operator commands (`key`, `quota`, `node`, `status`) name keys and never match one: a
   * `key_env` variable unset in their shell is then no problem (the server has it).
   */
  readonly keySecretsOptional?: boolean;
}

/** The config path by precedence: --config, then CONFIG_PATH, then the default. */
export function resolveConfigPath(options: LoadConfigOptions): string {
  const env = options.env ?? process.env;
  // An empty CONFIG_PATH (`CONFIG_PATH= cascade …`) means unset, not "the working directory".
  const chosen = options.configPath ?? (env.CONFIG_PATH || DEFAULT_CONFIG_PATH);
  return path.resolve(options.cwd ?? process.cwd(), chosen);
}

/** The nearest `.env` in `cwd` or one of its ancestors. */
function findDotEnv(cwd: string): string | undefined {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const file = path.join(dir, '.env');
    if (existsSync(file)) return file;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * Loads the nearest `.env` (in `cwd` or an ancestor, as CascadeRPC does) into `env` without
 * overriding variables that are already set. No file is fine; returns the names it set.
 */
export function loadDotEnv(cwd: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const file = findDotEnv(cwd);
  if (file === undefined) return [];
  const parsed = parseEnv(readFileSync(file, 'utf8'));
  const set: string[] = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (env[key] !== undefined) continue;
    env[key] = value;
    set.push(key);
  }
  return set;
}

function readDocument(file: string, problems: ProblemList): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.error(
      file,
      '',
      code === 'ENOENT' ? 'config file not found' : `cannot read config file: ${String(err)}`,
      'pass --config PATH or set CONFIG_PATH; config/balancer_config/config.example.toml is a starting point',
    );
    return undefined;
  }
  try {
    return parse(text, { integersAsBigInt: 'asNeeded' });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? 'parse error';
    const { line, column } = err as { line?: number; column?: number };
    const where = line === undefined ? '' : ` (line ${line}, column ${column ?? 0})`;
    problems.error(file, '', `not valid TOML${where}: ${message}`);
    return undefined;
  }
}

/** How many `[[keys]]` entries the config itself writes, read or not. */
function declaredKeys(doc: Record<string, unknown>): number {
  return Array.isArray(doc.keys) ? doc.keys.length : 0;
}

/** Loads and validates the balancer config and every price list it names. */
export function loadConfig(options: LoadConfigOptions = {}): LoadResult {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const registry = options.registry ?? new MethodRegistry();
  const file = resolveConfigPath({ ...options, env, cwd });
  const problems = new ProblemList();
  const doc = readDocument(file, problems);
  if (!doc)
    return { config: undefined, path: file, errors: problems.errors, warnings: problems.warnings };

  for (const key of Object.keys(doc)) {
    if (!TOP_LEVEL_KEYS.includes(key)) {
      const guess = key.startsWith('node') ? 'nodes' : closestMatch(key, TOP_LEVEL_KEYS);
      problems.error(
        file,
        key,
        'unknown top-level key',
        guess === 'nodes'
          ? "did you mean 'nodes'? Write each node as [[nodes]]"
          : guess
            ? `did you mean '${guess}'?`
            : 'the config holds [server], [[nodes]] or [[chains]], [[accounts]], [cluster], [routing], [cache], [[keys]] and keys_file only',
      );
    }
  }
  const server = readServerSection(doc, file, problems, env);
  const cluster = readClusterSection(doc, file, env, problems);
  const cache = readCacheSection(doc, file, problems);
  const keys = readKeysSection(doc, file, env, problems, options.keySecretsOptional === true);
  if (server) checkKeyExposure(server, keys, file, problems, declaredKeys(doc));
  const accounts = readAccountsSection(doc, file, problems);
  const ctx: NodeListContext = { file, env, cwd, registry, priceLists: new Map() };
  const topRouting = (list: ProblemList) => readRoutingSection(doc, file, registry, list);
  let nodes: NodeConfig[];
  let named: NamedNode[];
  let chains: ChainConfig[] | undefined;
  let routing: RoutingConfig | undefined;
  if (doc.chains !== undefined) {
    if (doc.nodes !== undefined)
      problems.error(
        file,
        'nodes',
        'the config has both top-level [[nodes]] and [[chains]]',
        "with [[chains]], write each chain's nodes as [[chains.nodes]] under it",
      );
    // Top-level [routing] is read once, as the default of chains without their own.
    let shared: RoutingConfig | undefined;
    const read = readChainsSection(
      doc.chains,
      ctx,
      { server, cache, routing: (list) => (shared ??= topRouting(list)) },
      problems,
    );
    ({ nodes, named, chains } = read);
    routing = shared ?? topRouting(new ProblemList());
  } else {
    const entries = readNodeEntries(doc.nodes, file, env, problems);
    nodes = resolveNodes(entries, ctx, problems, undefined);
    named = entries.map((entry, i) => ({
      name: entry.name,
      account: entry.account,
      where: `nodes[${i}]`,
    }));
    // After the price lists: the registry then knows every method a node can price.
    routing = topRouting(problems);
  }
  checkNodeNames(named, file, problems);
  checkKeyChains(keys, chains, file, problems);
  checkAccountLinks(accounts ?? [], writtenAccountNames(doc), named, file, problems);
  checkKeyLimitsScope(
    keys,
    cluster,
    nodes.map((node) => node.name),
    file,
    problems,
  );
  const config =
    problems.errors.length === 0 && server
      ? {
          path: file,
          server,
          nodes,
          cluster,
          routing,
          ...(cache ? { cache } : {}),
          ...(keys ? { keys } : {}),
          ...(chains ? { chains } : {}),
          ...(accounts ? { accounts } : {}),
        }
      : undefined;
  return { config, path: file, errors: problems.errors, warnings: problems.warnings };
}
