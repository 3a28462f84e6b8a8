/**
 * A list of `[[nodes]]` tables (top-level, or one chain's `[[chains.nodes]]`): each entry's
 * own fields, unique names, and every price list they name loaded once — into resolved
 * NodeConfigs. Problems are reported with the list's own path (`chains[1].nodes[0].url`).
 */
import path from 'node:path';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { MAX_NODES, readNodeFields, type NamedNode, type NodeEntry } from './node-section.js';
import { loadPriceList } from './price-list.js';
import type { ProblemList } from './problem-list.js';
import { describeType, isTable } from './toml-fields.js';
import type { NodeConfig, PriceList } from './types.js';

/** What reading node lists shares across chains: price lists loaded once, and the env. */
export interface NodeListContext {
  readonly file: string;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly registry: MethodRegistry;
  readonly priceLists: Map<string, PriceList | undefined>;
}

/**
 * Reads the entries of one node list (`problems` already scoped to the list's table); `table`
 * is how the list is written there (`[[chains.nodes]]` inside a chain), for the messages.
 */
export function readNodeEntries(
  nodes: unknown,
  file: string,
  env: NodeJS.ProcessEnv,
  problems: ProblemList,
  table = '[[nodes]]',
): NodeEntry[] {
  if (nodes === undefined) {
    problems.error(
      file,
      'nodes',
      `no ${table} tables`,
      `add at least one ${table} entry for an upstream`,
    );
    return [];
  }
  if (!Array.isArray(nodes)) {
    problems.error(
      file,
      'nodes',
      `must be an array of tables, got ${describeType(nodes)}`,
      `write each node as ${table}`,
    );
    return [];
  }
  if (nodes.length === 0) {
    problems.warn(
      file,
      'nodes',
      'the node list is empty; every request will get 502',
      `add a ${table} entry`,
    );
  }
  const result: NodeEntry[] = [];
  nodes.forEach((entry: unknown, index) => {
    if (!isTable(entry)) {
      problems.error(
        file,
        `nodes[${index}]`,
        `must be a table, got ${describeType(entry)}`,
        'write each node as [[nodes]]',
      );
      return;
    }
    result.push(readNodeFields(entry, index, env, file, problems));
  });
  return result;
}

/** Resolves entries with their price lists; `chain` is set on each node when given. */
export function resolveNodes(
  entries: readonly NodeEntry[],
  ctx: NodeListContext,
  problems: ProblemList,
  chain: string | undefined,
): NodeConfig[] {
  const nodes: NodeConfig[] = [];
  for (const entry of entries) {
    // Every price list is read, even for a node with other problems: one pass reports all.
    const configured = entry.providerPricingPath;
    if (configured === undefined) continue;
    const absolute = path.resolve(ctx.cwd, configured);
    if (!ctx.priceLists.has(absolute)) {
      ctx.priceLists.set(absolute, loadPriceList(absolute, configured, ctx.registry, problems));
    }
    const pricing = ctx.priceLists.get(absolute);
    const node = entry.fields;
    if (!pricing || !node) continue;
    const { providerPricingPath: _unused, ...rest } = node;
    const spilloverThreshold =
      node.monthlyLimit === undefined
        ? Infinity
        : // BigInt keeps floor(limit × percent / 100) exact for limits near 2^53.
          Number((BigInt(node.monthlyLimit) * BigInt(pricing.spilloverPercent)) / 100n);
    nodes.push({ ...rest, pricing, spilloverThreshold, ...(chain === undefined ? {} : { chain }) });
  }
  return nodes;
}

/**
 * Node names are unique across the whole config (every chain): quotas.json, metrics and the
 * admin API key everything by them. `where` gives each entry's path for the message.
 */
export function checkNodeNames(
  named: readonly NamedNode[],
  file: string,
  problems: ProblemList,
): void {
  if (named.length > MAX_NODES) {
    problems.error(
      file,
      'nodes',
      `at most ${MAX_NODES} nodes are supported, config has ${named.length}`,
      'remove some nodes or run several cascade instances',
    );
  }
  const seen = new Map<string, string>();
  for (const { name, where } of named) {
    if (name === undefined) continue;
    const first = seen.get(name);
    if (first === undefined) {
      seen.set(name, where);
      continue;
    }
    problems.error(
      file,
      `${where}.name`,
      `two nodes share the name '${name}' (${first} and ${where})`,
      'node names must be unique; quotas and metrics are keyed by them',
    );
  }
}
