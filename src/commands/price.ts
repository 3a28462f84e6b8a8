import {
  MethodRegistry,
  UNPRICED,
  formatProblem,
  loadConfig,
  loadDotEnv,
  describeRouting,
  priceOf,
  priceSourceOf,
  type MethodStrategy,
  UsageError,
} from '../core/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { renderJson, renderTable } from './output.js';
import { logsPlans, renderLogsPlans } from './price-logs.js';

/** Flags of `cascade price`. */
export interface PriceOptions {
  readonly config?: string | undefined;
  readonly json?: boolean | undefined;
  /** eth_getLogs: how a range of this many blocks is cut and priced on each node. */
  readonly blocks?: number | undefined;
}

/** One method on one node. */
export interface PriceRow {
  readonly method: string;
  readonly node: string;
  readonly tier: number;
  /** Credits, or null when the node does not serve the method. */
  readonly cost: number | null;
  readonly source: 'routing' | 'custom' | 'unknown_method_cost' | null;
}

/** `cascade price METHOD…`: what each method costs on each node, in routing (tier) order. */
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
  const nodes = [...result.config.nodes].sort((a, b) => a.tier - b.tier);
  const rows: PriceRow[] = [];
  for (const method of methods) {
    const id = registry.idOf(method);
    for (const node of nodes) {
      const cost = priceOf(node.pricing, id);
      rows.push({
        method,
        node: node.name,
        tier: node.tier,
        cost: cost === UNPRICED ? null : cost,
        source: cost === UNPRICED ? null : (priceSourceOf(node.pricing, method) ?? null),
      });
    }
  }
  const routing = result.config.routing;
  const strategies = methods.map((method) => describeRouting(routing, method));
  const logs =
    options.blocks === undefined ? undefined : logsPlans(result.config, registry, options.blocks);
  if (options.json) {
    io.out(renderJson({ path: result.path, prices: rows, strategies, ...(logs && { logs }) }));
    return 0;
  }
  io.out(
    renderTable(
      ['method', 'node', 'tier', 'credits', 'source'],
      rows.map((row) => [
        row.method,
        row.node,
        String(row.tier),
        row.cost === null ? 'not priced (node skipped)' : row.cost.toLocaleString('en-US'),
        row.source ?? '—',
      ]),
    ),
  );
  for (const method of methods) {
    const first = rows.find((row) => row.method === method && row.cost !== null);
    io.out(
      first
        ? `${method}: first choice ${first.node} (tier ${first.tier}) at ${first.cost} credit(s)`
        : `${method}: no node prices it; requests for it get 502`,
    );
  }
  for (const strategy of strategies) io.out(strategyLine(strategy));
  if (logs !== undefined) io.out(renderLogsPlans(logs));
  return 0;
}

/** One line saying how a method is routed. */
function strategyLine(s: MethodStrategy): string {
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
  return `${s.method}: strategy ${s.strategy} — ${[order, ...extras].join('; ')}`;
}
