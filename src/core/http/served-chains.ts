/**
 * The chains this server serves (issue 28), each with what its requests are served with: the
 * routing context over its own nodes and policies, and its own response cache and coalescer —
 * one set per chain, shared by every door of that chain (HTTP, batches, WebSocket), so two
 * chains never share an answer. A chain keeps its objects across reloads for as long as its
 * name stays in the config (the cache keeps its answers, routing its table slot).
 */
import type { Logger } from 'pino';
import { ResponseCache } from '../cache/response-cache.js';
import type { ChainConfig } from '../config/types.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import { PolicyTable } from '../routing/policy-table.js';
import type { RouteContext } from '../routing/route-context.js';
import type { ChainSlot, Topology } from '../routing/topology.js';
import { ChainPaths } from './chain-paths.js';
import type { ProxyHandlerContext } from './exchange-record.js';

/** What every chain's handler context shares (all of it but routing and the cache). */
export type SharedHandlerContext = Omit<ProxyHandlerContext, 'route' | 'cache' | 'chain'>;

/** One chain as the server serves it. */
export class ServedChain {
  #config: ChainConfig;
  #policies: PolicyTable;
  /** The chain's eth_getLogs settings, updated in place by a reload. */
  readonly #logs: { maxBlockRange: number | undefined };
  /** The HTTP handler's context for this chain's requests (the WebSocket side reads it too). */
  readonly handler: ProxyHandlerContext;

  constructor(
    config: ChainConfig,
    readonly slot: ChainSlot,
    shared: SharedHandlerContext,
    route: Omit<RouteContext, 'table' | 'policies'>,
    private readonly registry: MethodRegistry,
  ) {
    this.#config = config;
    this.#policies = new PolicyTable(config.routing, registry);
    this.#logs = { maxBlockRange: config.lag?.maxLogsBlockRange };
    const cache = new ResponseCache(
      config.cache,
      shared.metrics.cache,
      config.routing?.writeMethods,
      slot.state,
    );
    this.handler = {
      ...shared,
      chain: config.name,
      route: {
        ...route,
        table: () => slot.table,
        policies: () => this.#policies,
        chainMetrics: shared.metrics.forChain?.(config.name),
        logs: this.#logs,
      },
      cache,
    };
  }

  get name(): string {
    return this.#config.name;
  }

  get config(): ChainConfig {
    return this.#config;
  }

  /** Applies the chain's reloaded config: policies now, the cache reconfigured in place. */
  reconfigure(config: ChainConfig): void {
    this.#config = config;
    this.#policies = new PolicyTable(config.routing, this.registry);
    this.#logs.maxBlockRange = config.lag?.maxLogsBlockRange;
    // A changed [cache] applies at once; a changed price list leaves stored answers alone.
    this.handler.cache?.reconfigure(config.cache, config.routing?.writeMethods);
  }
}

/** Every chain served, and which one a request's path and host reach. */
export class ServedChains {
  #byName = new Map<string, ServedChain>();
  #paths: ChainPaths<ServedChain> = new ChainPaths([]);

  constructor(
    private readonly topology: Topology,
    private readonly shared: SharedHandlerContext,
    private readonly route: Omit<RouteContext, 'table' | 'policies'>,
    private readonly registry: MethodRegistry,
    private readonly logger: Logger,
  ) {}

  /** Serves `chains` (the first call, and every reload): survivors keep their cache. */
  apply(chains: readonly ChainConfig[]): void {
    const next = new Map<string, ServedChain>();
    for (const config of chains) {
      const slot = this.topology.slot(config.name);
      if (slot === undefined) continue;
      const existing = this.#byName.get(config.name);
      if (existing !== undefined && existing.slot === slot) {
        existing.reconfigure(config);
        next.set(config.name, existing);
      } else {
        next.set(
          config.name,
          new ServedChain(config, slot, this.shared, this.route, this.registry),
        );
      }
    }
    for (const [name, gone] of this.#byName)
      if (!next.has(name)) {
        gone.handler.cache?.reconfigure(undefined, undefined);
        this.shared.metrics.removeChain?.(name);
        this.logger.info({ chain: name }, 'chain no longer served');
      }
    this.#byName = next;
    this.#paths = new ChainPaths(
      [...next.values()].map((chain) => ({
        paths: chain.config.paths,
        hosts: chain.config.hosts,
        target: chain,
      })),
    );
  }

  /**
   * The chain `path` on `host` reaches (with the key its path carries), or undefined;
   * `connection` remembers a keyed path for the connection's next request.
   */
  resolve(path: string, host: string | undefined, keysOn: boolean, connection?: object) {
    return this.#paths.resolve(path, host, keysOn, connection);
  }

  /** Every path a chain is served on (the 404 lists them). */
  get paths(): string[] {
    return this.#paths.paths;
  }

  /** A chain by name. */
  get(name: string): ServedChain | undefined {
    return this.#byName.get(name);
  }

  /** Every chain, in config order. */
  all(): ServedChain[] {
    return [...this.#byName.values()];
  }

  /** The first chain (the only one of a `[[nodes]]` config). */
  first(): ServedChain {
    return this.#byName.values().next().value as ServedChain;
  }
}
