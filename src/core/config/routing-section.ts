/**
 * The `[routing]` table: per-method strategies (cost / latency), hedging for reads, and which
 * methods are writes (with optional broadcast). Every key is optional; the shipped defaults
 * send latency-sensitive methods (a blockhash, a fee estimate, a transaction) to the fastest
 * node whatever its tier, and everything else cheapest tier first.
 *
 *   [routing]
 *   default_strategy = "cost"            # "cost" | "latency"
 *   hedge_max_share = 0.1                # hedged attempts ≤ this share of hedgeable requests
 *   write_methods = ["sendTransaction"]  # replaces the shipped list
 *   [routing.methods]
 *   getAccountInfo = { hedge_after_ms = 150 }
 *   sendTransaction = { strategy = "latency", broadcast = 3 }
 *   getLatestBlockhash = "cost"          # drop a shipped default
 */
import type { MethodRegistry } from '../protocol/method-registry.js';
import { SHIPPED_WRITE_METHODS, isSignedTransactionMethod } from '../protocol/write-methods.js';
import { closestMatch } from './did-you-mean.js';
import { MAX_NODES } from './node-section.js';
import type { ProblemList } from './problem-list.js';
import { FieldReader, describeType, isTable, type Table } from './toml-fields.js';
import {
  ROUTING_STRATEGIES,
  type MethodRouting,
  type RoutingConfig,
  type RoutingStrategy,
} from './types.js';

/** Default cap on hedged attempts: one in ten hedgeable requests at most. */
export const DEFAULT_HEDGE_MAX_SHARE = 0.1;
const MAX_HEDGE_AFTER_MS = 60_000;

/** Methods that go to the fastest node by default: a trader or a wallet waits on them. */
export const SHIPPED_LATENCY_METHODS: readonly string[] = [
  'getLatestBlockhash',
  'getPriorityFeeEstimate',
  'getRecentPrioritizationFees',
  'sendTransaction',
  'eth_sendRawTransaction',
  'eth_estimateGas',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
];

const ROUTING_KEYS = ['default_strategy', 'hedge_max_share', 'write_methods', 'methods'] as const;
const METHOD_KEYS = ['strategy', 'hedge_after_ms', 'broadcast'] as const;
const STRATEGY_HINT = `one of ${ROUTING_STRATEGIES.map((s) => `"${s}"`).join(', ')}`;

function plain(strategy: RoutingStrategy): MethodRouting {
  return { strategy, hedgeAfterMs: undefined, broadcast: 1 };
}

/** The routing config with nothing configured: the shipped defaults. */
export function shippedRouting(): RoutingConfig {
  return {
    defaultStrategy: 'cost',
    hedgeMaxShare: DEFAULT_HEDGE_MAX_SHARE,
    writeMethods: SHIPPED_WRITE_METHODS,
    methods: new Map(SHIPPED_LATENCY_METHODS.map((name) => [name, plain('latency')])),
  };
}

/** The policy `method` gets under `routing` (its entry, else the default strategy). */
export function methodRouting(routing: RoutingConfig, method: string): MethodRouting {
  return routing.methods.get(method) ?? plain(routing.defaultStrategy);
}

function readStrategy(
  value: unknown,
  file: string,
  path: string,
  problems: ProblemList,
): RoutingStrategy | undefined {
  if (value === 'cost' || value === 'latency') return value;
  problems.error(file, path, `must be ${STRATEGY_HINT}, got ${describeType(value)}`);
  return undefined;
}

function readShare(table: Table, file: string, r: FieldReader, problems: ProblemList): number {
  r.accept('hedge_max_share');
  const value = table.hedge_max_share;
  if (value === undefined) return DEFAULT_HEDGE_MAX_SHARE;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    problems.error(
      file,
      'routing.hedge_max_share',
      `must be a number from 0 to 1, got ${describeType(value)}`,
      'e.g. 0.1: at most one hedged attempt per ten hedgeable requests; 0 turns hedging off',
    );
    return DEFAULT_HEDGE_MAX_SHARE;
  }
  return value;
}

function readWriteMethods(table: Table, file: string, problems: ProblemList): readonly string[] {
  const value = table.write_methods;
  if (value === undefined) return SHIPPED_WRITE_METHODS;
  if (!Array.isArray(value) || value.some((name) => typeof name !== 'string' || name === '')) {
    problems.error(
      file,
      'routing.write_methods',
      `must be a list of method names, got ${describeType(value)}`,
      `e.g. write_methods = ["sendTransaction", "eth_sendRawTransaction"]; omit it for the shipped list (${SHIPPED_WRITE_METHODS.join(', ')})`,
    );
    return SHIPPED_WRITE_METHODS;
  }
  return value as string[];
}

interface MethodContext {
  readonly file: string;
  readonly problems: ProblemList;
  readonly defaultStrategy: RoutingStrategy;
  readonly writes: ReadonlySet<string>;
}

function readMethod(name: string, value: unknown, ctx: MethodContext): MethodRouting | undefined {
  const { file, problems } = ctx;
  const path = `routing.methods.${name}`;
  if (typeof value === 'string') {
    const strategy = readStrategy(value, file, path, problems);
    return strategy === undefined ? undefined : plain(strategy);
  }
  if (!isTable(value)) {
    problems.error(
      file,
      path,
      `must be a strategy or a table, got ${describeType(value)}`,
      `e.g. ${name} = "latency", or ${name} = { strategy = "latency", hedge_after_ms = 100 }`,
    );
    return undefined;
  }
  const r = new FieldReader(value, file, path, problems);
  r.accept('strategy');
  const strategy =
    value.strategy === undefined
      ? ctx.defaultStrategy
      : readStrategy(value.strategy, file, `${path}.strategy`, problems);
  const write = ctx.writes.has(name);
  const hedgeAfterMs = r.integer('hedge_after_ms', {
    min: 1,
    max: MAX_HEDGE_AFTER_MS,
    required: false,
    hint: 'milliseconds without an answer before a second node is asked',
  });
  const broadcast = r.integer('broadcast', {
    min: 1,
    max: MAX_NODES,
    required: false,
    hint: 'how many nodes a write is sent to at once',
  });
  r.rejectUnknown(METHOD_KEYS);
  if (write && hedgeAfterMs !== undefined) {
    problems.error(
      file,
      `${path}.hedge_after_ms`,
      `${name} is a write: it is never hedged (a second send could land twice)`,
      'use broadcast = N to send a write to several nodes at once, or remove it from write_methods',
    );
  }
  if (!write && broadcast !== undefined) {
    problems.error(
      file,
      `${path}.broadcast`,
      `${name} is not a write method; broadcast applies to writes only`,
      'add it to [routing] write_methods, or use hedge_after_ms for a read',
    );
  }
  if (strategy === undefined) return undefined;
  return { strategy, hedgeAfterMs, broadcast: broadcast ?? 1 };
}

/** Warns about method names no node can price: most likely a typo. */
function checkNames(
  names: Iterable<[string, string]>,
  registry: MethodRegistry,
  file: string,
  problems: ProblemList,
): void {
  for (const [path, name] of names) {
    if (registry.idOf(name) !== -1) continue;
    const guess = closestMatch(name, registry.standardNames());
    problems.warn(
      file,
      path,
      `'${name}' is neither a standard method nor in any price list's [custom]`,
      guess ? `did you mean '${guess}'?` : 'check the spelling (names are case-sensitive)',
    );
  }
}

/**
 * Reads `[routing]` (absent = shipped defaults). Call after the price lists are loaded:
 * `registry` then knows every method a node can price, and names it does not know are warned
 * about.
 */
export function readRoutingSection(
  doc: Table,
  file: string,
  registry: MethodRegistry,
  problems: ProblemList,
): RoutingConfig {
  const shipped = shippedRouting();
  const section = doc.routing;
  if (section === undefined) return shipped;
  if (!isTable(section)) {
    problems.error(
      file,
      'routing',
      `must be a table, got ${describeType(section)}`,
      'write [routing]',
    );
    return shipped;
  }
  const r = new FieldReader(section, file, 'routing', problems);
  r.accept('default_strategy');
  const defaultStrategy: RoutingStrategy =
    section.default_strategy === undefined
      ? 'cost'
      : (readStrategy(section.default_strategy, file, 'routing.default_strategy', problems) ??
        'cost');
  const hedgeMaxShare = readShare(section, file, r, problems);
  r.accept('write_methods');
  const writeMethods = readWriteMethods(section, file, problems);
  r.accept('methods');
  r.rejectUnknown(ROUTING_KEYS);
  const methods = new Map(shipped.methods);
  const named: Array<[string, string]> = writeMethods.map((name, i) => [
    `routing.write_methods[${i}]`,
    name,
  ]);
  const table = section.methods;
  if (table !== undefined && !isTable(table)) {
    problems.error(
      file,
      'routing.methods',
      `must be a table, got ${describeType(table)}`,
      'write [routing.methods] with one key per method',
    );
  } else if (table !== undefined) {
    const ctx = { file, problems, defaultStrategy, writes: new Set(writeMethods) };
    for (const [name, value] of Object.entries(table)) {
      named.push([`routing.methods.${name}`, name]);
      const policy = readMethod(name, value, ctx);
      if (policy !== undefined) methods.set(name, policy);
    }
  }
  checkNames(named, registry, file, problems);
  return { defaultStrategy, hedgeMaxShare, writeMethods, methods };
}

/** How one method is routed, as `cascade price` shows it (snake_case for --json). */
export interface MethodStrategy {
  readonly method: string;
  readonly strategy: RoutingStrategy;
  readonly hedge_after_ms: number | null;
  readonly write: boolean;
  /** A write whose transaction identity cascade computes (safe to resend). */
  readonly signed: boolean;
  readonly broadcast: number;
}

/** Describes `method`'s routing under `routing` (absent = the shipped defaults). */
export function describeRouting(
  routing: RoutingConfig | undefined,
  method: string,
): MethodStrategy {
  const config = routing ?? shippedRouting();
  const policy = methodRouting(config, method);
  const write = config.writeMethods.includes(method);
  return {
    method,
    strategy: policy.strategy,
    hedge_after_ms: write ? null : (policy.hedgeAfterMs ?? null),
    write,
    signed: write && isSignedTransactionMethod(method),
    broadcast: write ? policy.broadcast : 1,
  };
}
