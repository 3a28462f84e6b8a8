/**
 * A fleet of fake nodes (fake-upstream.ts: real UpstreamNodes whose transport is a script on a
 * ManualClock) with its routing context, and ways to route through it.
 */
import { ManualClock } from '../../src/core/clock.js';
import type { RoutingConfig } from '../../src/core/config/types.js';
import { NOOP_METRICS, NOOP_NODE, type ProxyMetrics } from '../../src/core/metrics.js';
import type { UpstreamNode } from '../../src/core/node/upstream-node.js';
import { parseRequest, type RpcRequest } from '../../src/core/protocol/rpc-request.js';
import type { RouteEvents } from '../../src/core/routing/attempt.js';
import { routeBatch, type BatchResult } from '../../src/core/routing/batch-route.js';
import { PolicyTable } from '../../src/core/routing/policy-table.js';
import { route } from '../../src/core/routing/route.js';
import type { RouteContext, RouteResult } from '../../src/core/routing/route-context.js';
import { buildTable, type RoutingTable } from '../../src/core/routing/routing-table.js';
import {
  fakeNode,
  fakeNodeDeps,
  type FakeNodeDeps,
  type Script,
  type ScriptedTransport,
} from './fake-upstream.js';
import { TEST_REGISTRY, nodeConfig } from './node-config.js';
import { routingWith } from './routing-config.js';

export { answers, errors, type Reply, type Script } from './fake-upstream.js';

/** One node of a fake fleet. */
export interface FakeNodeSpec {
  readonly name: string;
  readonly script: Script;
  readonly tier?: number;
  readonly rpsLimit?: number;
  readonly maxConcurrent?: number;
}

/** What the fleet's routing reported. */
export interface FleetLog {
  readonly penalized: string[];
  readonly recovered: string[];
  readonly hedges: number[];
  readonly writes: number[];
  readonly strategies: number[];
  /** Changes of the waiting gauge (rpc_sleep_queue_size). */
  readonly waits: number[];
}

/** Scripted nodes, their routing context, and ways to route through them. */
export class FakeFleet {
  readonly clock = new ManualClock(1_000);
  readonly nodes: UpstreamNode[];
  readonly log: FleetLog = {
    penalized: [],
    recovered: [],
    hedges: [],
    writes: [],
    strategies: [],
    waits: [],
  };
  /** The routing table in force (tests may publish another, as a reload does). */
  table: RoutingTable;
  readonly ctx: RouteContext;
  readonly #transports = new Map<string, ScriptedTransport>();

  constructor(
    specs: readonly FakeNodeSpec[],
    options: { routing?: RoutingConfig; budgetMs?: number; attemptTimeoutMs?: number } = {},
  ) {
    const deps = fakeNodeDeps(this.clock);
    this.nodes = specs.map((spec) => this.#node(spec, deps));
    this.table = buildTable(this.nodes);
    const log = this.log;
    const events: RouteEvents = {
      penalized: (node) => log.penalized.push(node.name),
      recovered: (node) => log.recovered.push(node.name),
    };
    const metrics: ProxyMetrics = {
      ...NOOP_METRICS,
      hedge: (event) => log.hedges.push(event),
      write: (outcome) => log.writes.push(outcome),
      strategyAttempt: (strategy) => log.strategies.push(strategy),
      sleepQueue: (delta) => log.waits.push(delta),
      forNode: () => NOOP_NODE,
    };
    const policies = new PolicyTable(options.routing ?? routingWith({}), TEST_REGISTRY);
    this.ctx = {
      clock: this.clock,
      events,
      attemptTimeoutMs: options.attemptTimeoutMs ?? 500,
      table: () => this.table,
      metrics,
      budgetMs: options.budgetMs ?? 1_000,
      policies: () => policies,
    };
  }

  #node(spec: FakeNodeSpec, deps: FakeNodeDeps): UpstreamNode {
    const config = nodeConfig({
      name: spec.name,
      tier: spec.tier ?? 0,
      rpsLimit: spec.rpsLimit ?? Infinity,
      maxConcurrent: spec.maxConcurrent ?? Infinity,
    });
    const { node, transport } = fakeNode(config, deps, spec.script);
    this.#transports.set(spec.name, transport);
    return node;
  }

  node(name: string): UpstreamNode {
    return this.nodes.find((n) => n.name === name)!;
  }

  /** The bodies `name` received, in order. */
  calls(name: string): readonly string[] {
    return this.#transports.get(name)!.calls;
  }

  /** Replaces `name`'s script. */
  script(name: string, script: Script): void {
    this.#transports.get(name)!.script = script;
  }

  /** Makes `name` measured at `ms` (for the latency order), then re-ranks. */
  measure(name: string, ms: number): void {
    const node = this.node(name);
    for (let i = 0; i < 20; i++) node.ema.observe(ms);
    this.table = buildTable(this.nodes);
  }

  request(json: string): RpcRequest {
    const parsed = parseRequest(Buffer.from(json, 'utf8'), TEST_REGISTRY);
    if (!parsed.ok) throw new Error(`not a request: ${json}`);
    return parsed.request;
  }

  /** Routes one request; settle it by moving the clock (`advance`). */
  route(json: string): Promise<RouteResult> {
    return new Promise((resolve) => {
      route(this.request(json), undefined, this.ctx, resolve, undefined);
    });
  }

  /** Routes a batch body. */
  batch(json: string): Promise<BatchResult> {
    const request = this.request(json);
    return routeBatch(request.batch!, undefined, this.ctx);
  }

  /** Moves the clock by `ms`, letting promise callbacks run between timers. */
  advance(ms: number): Promise<void> {
    return this.clock.advanceAsync(ms);
  }
}

/** A single request's JSON. */
export function rpc(method: string, id: number, params: unknown[] = []): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

/** A result's body as text (an answer), or its kind. */
export function bodyOf(result: RouteResult): string {
  if (result.kind !== 'answer') return result.kind;
  return Buffer.isBuffer(result.body) ? result.body.toString('utf8') : 'stream';
}
