/**
 * `[[chains]]` (issue 28): several chains on one proxy. Each chain is served on its own URL
 * paths (and optionally `Host` names) and has its own `[[chains.nodes]]`, cache, routing
 * policies, lag settings and `expect_chain`; the top-level `[cache]`, `[routing]` and
 * `[server]` lag keys are the defaults of every chain that does not set its own. A config
 * with top-level `[[nodes]]` instead is one chain served at `/`, exactly as before.
 */
import { readCacheSection } from './cache-section.js';
import { CHAIN_KEYS, readChainFields } from './chain-fields.js';
import { readNodeEntries, resolveNodes, type NodeListContext } from './node-list.js';
import type { NamedNode, NodeEntry } from './node-section.js';
import type { ProblemList } from './problem-list.js';
import { readRoutingSection } from './routing-section.js';
import { FieldReader, describeType, isTable, type Table } from './toml-fields.js';
import type { CacheConfig, ChainConfig, NodeConfig, RoutingConfig, ServerConfig } from './types.js';

const CHAIN_TABLE_KEYS = [
  'name',
  'paths',
  'hosts',
  'nodes',
  'cache',
  'routing',
  ...CHAIN_KEYS,
] as const;
/** First path segments the proxy itself answers: no chain may be served there. */
const RESERVED_SEGMENTS = ['health', 'metrics', 'send-request', 'status', 'admin'];
const PATH = /^(\/[A-Za-z0-9._~-]+)+$/;
const HOST = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** One `[[chains]]` table read, before its nodes' price lists are loaded. */
interface ChainEntry {
  readonly index: number;
  readonly table: Table;
  readonly config: Omit<ChainConfig, 'routing'> | undefined;
  readonly nodes: readonly NodeEntry[];
}

/** What the chains section gives the loader: the chains and every chain's nodes. */
export interface ChainsRead {
  readonly chains: ChainConfig[];
  readonly nodes: NodeConfig[];
  /** Each node entry's name and path, for the config-wide uniqueness check. */
  readonly named: NamedNode[];
}

/** The defaults a chain inherits from the top level. */
export interface ChainDefaults {
  readonly server: ServerConfig | undefined;
  readonly cache: CacheConfig | undefined;
  readonly routing: (problems: ProblemList) => RoutingConfig;
}

function readStrings(
  value: unknown,
  file: string,
  where: string,
  problems: ProblemList,
  hint: string,
): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    problems.error(file, where, `must be an array of strings, got ${describeType(value)}`, hint);
    return undefined;
  }
  return value as string[];
}

function readPaths(table: Table, name: string, file: string, problems: ProblemList): string[] {
  const hint = 'e.g. paths = ["/solana"]: each path starts with / and has no ? or #';
  const written = readStrings(table.paths, file, 'paths', problems, hint) ?? [`/${name}`];
  if (written.length === 0) problems.error(file, 'paths', 'must name at least one path', hint);
  const paths: string[] = [];
  written.forEach((raw, i) => {
    const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
    const segment = path.split('/')[1] ?? '';
    if (path !== '/' && !PATH.test(path)) {
      problems.error(file, `paths[${i}]`, `is not a URL path: ${JSON.stringify(raw)}`, hint);
    } else if (RESERVED_SEGMENTS.includes(segment)) {
      problems.error(
        file,
        `paths[${i}]`,
        `${JSON.stringify(raw)} is a path cascade itself answers (/${segment})`,
        'choose another path, e.g. the chain name',
      );
    } else paths.push(path);
  });
  return paths;
}

function readHosts(table: Table, file: string, problems: ProblemList): string[] {
  const hint = 'e.g. hosts = ["base.rpc.example.com"]: host names without scheme or port';
  const written = readStrings(table.hosts, file, 'hosts', problems, hint) ?? [];
  const hosts: string[] = [];
  written.forEach((raw, i) => {
    const host = raw.toLowerCase();
    if (!HOST.test(host))
      problems.error(file, `hosts[${i}]`, `is not a host name: ${JSON.stringify(raw)}`, hint);
    else hosts.push(host);
  });
  return hosts;
}

function readChain(
  table: Table,
  index: number,
  ctx: NodeListContext,
  defaults: ChainDefaults,
  problems: ProblemList,
): ChainEntry {
  const scoped = problems.under(`chains[${index}]`);
  const file = ctx.file;
  const r = new FieldReader(table, file, `chains[${index}]`, problems);
  const name = r.string('name', true, 'every chain needs a unique name, e.g. name = "solana"');
  if (name !== undefined && !NAME.test(name))
    problems.error(
      file,
      `chains[${index}].name`,
      `must be letters, digits, '.', '_' or '-': ${JSON.stringify(name)}`,
      'e.g. name = "base-mainnet"',
    );
  for (const key of ['paths', 'hosts', 'nodes', 'cache', 'routing']) r.accept(key);
  const lag = readChainFields(r, file, problems) ?? defaults.server?.chain;
  r.rejectUnknown(CHAIN_TABLE_KEYS);
  const label = name ?? `chain${index}`;
  const paths = readPaths(table, label, file, scoped);
  const hosts = readHosts(table, file, scoped);
  const cache = table.cache === undefined ? defaults.cache : readCacheSection(table, file, scoped);
  const nodes = readNodeEntries(table.nodes, file, ctx.env, scoped, '[[chains.nodes]]');
  const config =
    name === undefined
      ? undefined
      : {
          name,
          paths,
          hosts,
          ...(lag === undefined ? {} : { lag }),
          ...(cache === undefined ? {} : { cache }),
        };
  return { index, table, config, nodes };
}

/**
 * Reads `[[chains]]` (when the config has them): each chain, its nodes (price lists loaded),
 * and its routing (read last, once the registry knows every priced method).
 */
export function readChainsSection(
  section: unknown,
  ctx: NodeListContext,
  defaults: ChainDefaults,
  problems: ProblemList,
): ChainsRead {
  const file = ctx.file;
  const read: ChainsRead = { chains: [], nodes: [], named: [] };
  if (!Array.isArray(section) || section.length === 0) {
    problems.error(
      file,
      'chains',
      `must be an array of tables, got ${describeType(section)}`,
      'write each chain as [[chains]] with its nodes as [[chains.nodes]]',
    );
    return read;
  }
  const entries: ChainEntry[] = [];
  section.forEach((table: unknown, index) => {
    if (!isTable(table)) {
      problems.error(
        file,
        `chains[${index}]`,
        `must be a table, got ${describeType(table)}`,
        'write each chain as [[chains]]',
      );
      return;
    }
    entries.push(readChain(table, index, ctx, defaults, problems));
  });
  for (const entry of entries) {
    // Price lists report problems in their own files: not under this chain's path.
    read.nodes.push(...resolveNodes(entry.nodes, ctx, problems, entry.config?.name));
    entry.nodes.forEach((node, i) =>
      read.named.push({
        name: node.name,
        account: node.account,
        where: `chains[${entry.index}].nodes[${i}]`,
      }),
    );
  }
  for (const entry of entries) {
    const scoped = problems.under(`chains[${entry.index}]`);
    const routing =
      entry.table.routing === undefined
        ? defaults.routing(problems)
        : readRoutingSection(entry.table, file, ctx.registry, scoped);
    if (entry.config !== undefined) read.chains.push({ ...entry.config, routing });
  }
  checkClaims(entries, file, problems);
  return read;
}

/**
 * Another chain's path that `path` lies under (`/eth/send-request` or `/eth/<key>` under
 * `/eth`): those sub-paths are the other chain's own. The root `/` claims none of them (a
 * `[[chains]]` path at the root sits beside the others, which are matched first).
 */
function claimingParent(
  path: string,
  chain: string,
  paths: ReadonlyMap<string, string>,
): { path: string; chain: string } | undefined {
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const parent = path.slice(0, cut);
    const owner = paths.get(parent);
    if (owner !== undefined && owner !== chain) return { path: parent, chain: owner };
  }
  return undefined;
}

/** Chain names, paths and hosts are each claimed by one chain only. */
function checkClaims(entries: readonly ChainEntry[], file: string, problems: ProblemList): void {
  const names = new Map<string, number>();
  const paths = new Map<string, string>();
  const hosts = new Map<string, string>();
  entries.forEach((entry) => {
    const config = entry.config;
    if (config === undefined) return;
    const where = `chains[${entry.index}]`;
    const first = names.get(config.name);
    if (first !== undefined) {
      problems.error(
        file,
        `${where}.name`,
        `two chains share the name '${config.name}' (chains[${first}] and ${where})`,
        'chain names must be unique; keys, metrics and the status page name chains by them',
      );
      return;
    }
    names.set(config.name, entry.index);
    for (const path of config.paths) {
      const owner = paths.get(path);
      if (owner === config.name)
        problems.error(
          file,
          `${where}.paths`,
          `chain '${config.name}' lists the path ${path} twice`,
          'list each path once',
        );
      else if (owner !== undefined)
        problems.error(
          file,
          `${where}.paths`,
          `chains '${owner}' and '${config.name}' both claim the path ${path}`,
          'give each chain its own paths',
        );
      else paths.set(path, config.name);
    }
    for (const host of config.hosts) {
      const owner = hosts.get(host);
      if (owner !== undefined)
        problems.error(
          file,
          `${where}.hosts`,
          `chains '${owner}' and '${config.name}' both claim the host ${host}`,
          'give each chain its own host names',
        );
      else hosts.set(host, config.name);
    }
  });
  // Once every chain's paths are known, whichever order the chains come in.
  entries.forEach((entry) => {
    const config = entry.config;
    if (config === undefined || names.get(config.name) !== entry.index) return;
    for (const path of config.paths) {
      const parent = claimingParent(path, config.name, paths);
      if (parent !== undefined)
        problems.error(
          file,
          `chains[${entry.index}].paths`,
          `the path ${path} of chain '${config.name}' lies under ${parent.path}, the path of chain '${parent.chain}' (${parent.path}/send-request and ${parent.path}/<key> are that chain's)`,
          `pick a path outside every other chain's path, e.g. /${config.name}`,
        );
    }
  });
}
