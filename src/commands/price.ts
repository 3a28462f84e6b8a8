import {
  DEFAULT_CHAIN,
  MethodRegistry,
  UNPRICED,
  UsageError,
  chainOf,
  chainsOf,
  formatProblem,
  loadConfig,
  loadDotEnv,
  describeRouting,
  priceOf,
  priceSourceOf,
  type ChainConfig,
  type Config,
  type MethodStrategy,
} from '../core/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { renderJson, renderTable } from './output.js';
import { logsPlans, renderLogsPlans } from './price-logs.js';

/** Flags of `cascade price`. */
export interface PriceOptions {
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
  /** `--chain NAME`: only that chain's nodes (and its routing). */
  readonly chain?: string | undefined;
  /** eth_getLogs: how a range of this many blocks is cut and priced on each node. */
  readonly blocks?: number | undefined;
}

/** One method on one node. */
export interface PriceRow {
  readonly method: string;
  /** The node's chain (only with `[[chains]]`). */
  readonly chain?: string;
  readonly node: string;
  /** The provider account billed for it (only when it names one). */
  readonly account?: string;
  readonly tier: number;
  /** Credits, or null when the node does not serve the method. */
  readonly cost: number | null;
  readonly source: 'routing' | 'custom' | 'unknown_method_cost' | null;
}

/** The chains `--chain` selects (every chain without it); a clear error for an unknown name. */
function selectChains(config: Config, name: string | undefined): readonly ChainConfig[] {
  const chains = chainsOf(config);
  if (name === undefined) return chains;
  const chain = chains.find((one) => one.name === name);
  if (chain !== undefined) return [chain];
  const names = chains.map((one) => one.name).join(', ');
  throw new UsageError(
    `unknown chain '${name}'`,
    config.chains === undefined
      ? `this config's nodes are top-level [[nodes]]: its one chain is '${DEFAULT_CHAIN}'`
      : `the config's chains are: ${names}`,
  );
}

/** Each method on each node of `chains`, chain by chain in config order, tiers ascending. */
function priceRows(
  config: Config,
  chains: readonly ChainConfig[],
  methods: readonly string[],
  registry: MethodRegistry,
): PriceRow[] {
  const order = chains.map((chain) => chain.name);
  const nodes = config.nodes
    .filter((node) => order.includes(chainOf(node)))
    .sort((a, b) => order.indexOf(chainOf(a)) - order.indexOf(chainOf(b)) || a.tier - b.tier);
  const rows: PriceRow[] = [];
  for (const method of methods) {
    const id = registry.idOf(method);
    for (const node of nodes) {
      const cost = priceOf(node.pricing, id);
      rows.push({
        method,
        ...(config.chains === undefined ? {} : { chain: chainOf(node) }),
        node: node.name,
        ...(node.account === undefined ? {} : { account: node.account }),
        tier: node.tier,
        cost: cost === UNPRICED ? null : cost,
        source: cost === UNPRICED ? null : (priceSourceOf(node.pricing, method) ?? null),
      });
    }
  }
  return rows;
}

/** The table: a chain column with `[[chains]]`, an account column when a node has one. */
function renderRows(rows: readonly PriceRow[]): string {
  const chains = rows.some((row) => row.chain !== undefined);
  const accounts = rows.some((row) => row.account !== undefined);
  return renderTable(
    [
      'method',
      ...(chains ? ['chain'] : []),
      'node',
      ...(accounts ? ['account'] : []),
      'tier',
      'credits',
      'source',
    ],
    rows.map((row) => [
      row.method,
      ...(chains ? [row.chain ?? ''] : []),
      row.node,
      ...(accounts ? [row.account ?? '—'] : []),
      String(row.tier),
      row.cost === null ? 'not priced (node skipped)' : row.cost.toLocaleString('en-US'),
      row.source ?? '—',
    ]),
  );
}

/**
 * `cascade price METHOD… [--chain NAME]`: what each method costs on each node, in routing
 * (tier) order, chain by chain.
 */
export function runPrice(
  methods: readonly string[],
  options: PriceOptions,
  io: CommandIo,
): ExitCode {
  if (options.blocks !== undefined && !methods.includes('eth_getLogs')) {
    throw new UsageError(
      '--blocks plans an eth_getLogs range',
      'e.g. cascade price eth_getLogs --blocks 50000',
    );
  }
  loadDotEnv(io.cwd, io.env);
  const registry = new MethodRegistry();
  const result = loadConfig({ configPath: options.config, env: io.env, cwd: io.cwd, registry });
  if (!result.config) {
    for (const problem of result.errors) io.err(`error: ${formatProblem(problem)}`);
    io.err(`${result.path}: fix the config first (cascade validate-config shows every problem)`);
    return 1;
  }
  const config = result.config;
  const chains = selectChains(config, options.chain);
  const rows = priceRows(config, chains, methods, registry);
  // A chain's own [routing] decides its strategies; a [[nodes]] config has one chain.
  const named = config.chains !== undefined;
  const strategies = chains.flatMap((chain) =>
    methods.map((method) => ({
      ...(named ? { chain: chain.name } : {}),
      ...describeRouting(chain.routing, method),
    })),
  );
  const logs =
    options.blocks === undefined ? undefined : logsPlans(config, chains, registry, options.blocks);
  if (options.json) {
    io.out(renderJson({ path: result.path, prices: rows, strategies, ...(logs && { logs }) }));
    return 0;
  }
  io.out(renderRows(rows));
  for (const chain of chains)
    for (const method of methods) {
      const where = named ? ` on ${chain.name}` : '';
      const own = rows.filter(
        (row) => row.method === method && (!named || row.chain === chain.name),
      );
      const first = own.find((row) => row.cost !== null);
      io.out(
        first
          ? `${method}${where}: first choice ${first.node} (tier ${first.tier}) at ${first.cost} credit(s)`
          : `${method}${where}: no node prices it; requests for it get 502`,
      );
    }
  for (const strategy of strategies) io.out(strategyLine(strategy));
  if (logs !== undefined) io.out(renderLogsPlans(logs));
  return 0;
}

/** One line saying how a method is routed (on which chain, with `[[chains]]`). */
function strategyLine(s: MethodStrategy & { readonly chain?: string }): string {
  const order =
    s.strategy === 'cost'
      ? 'cheapest tier first, then the fastest within it'
      : 'the fastest measured node first, whatever its tier (unmeasured nodes in cost order)';
  const extras: string[] = [];
  if (s.hedge_after_ms !== null) {
    extras.push(`hedged: a second node after ${s.hedge_after_ms} ms without an answer`);
  }
  if (s.write) {
    extras.push(
      s.signed
        ? 'a write, signed: resent elsewhere when an attempt fails; "already known" answers with its hash/signature'
        : 'a write: resent elsewhere only when no node may have received it',
    );
    if (s.broadcast > 1) extras.push(`broadcast to ${s.broadcast} nodes at once`);
  }
  const where = s.chain === undefined ? '' : ` on ${s.chain}`;
  return `${s.method}${where}: strategy ${s.strategy} — ${[order, ...extras].join('; ')}`;
}
