/**
 * What a ProxyServer builds once from its options, before any chain is served: the context
 * every chain's handler shares, what routing reads (with the events it logs), and the proxy
 * paths' CORS policy.
 * Nothing here runs per request; the handlers read the values built here.
 */
import type { Clock } from '../clock.js';
import type { KeysConfig } from '../config/key-types.js';
import { ClientKeys } from '../keys/client-keys.js';
import { REQUEST_OUTCOMES, type ProxyMetrics } from '../metrics.js';
import type { RouteEvents } from '../routing/attempt.js';
import type { RouteContext } from '../routing/route-context.js';
import { trustedProxyList } from './client-address.js';
import { CorsPolicy } from './cors.js';
import type { SharedHandlerContext } from './served-chains.js';
import type { ProxyServerOptions } from './server-options.js';

/** Who may call the proxy paths from a page: `cors_origins`, and every key's `origins`. */
export function proxyCorsOf(
  corsOrigins: readonly string[],
  keys: KeysConfig | undefined,
): CorsPolicy | undefined {
  const keyOrigins = keys?.keys.flatMap((key) => key.origins) ?? [];
  return CorsPolicy.from([...new Set([...corsOrigins, ...keyOrigins])]);
}

/** What routing tells the server about nodes: logged, and passed on to the other workers. */
export function routeEventsOf(options: ProxyServerOptions): RouteEvents {
  return {
    penalized: (node, reason, seconds) => {
      options.logger.warn({ node: node.name, reason, seconds }, 'node penalized');
      options.onNodeHealth?.(node.name, seconds);
    },
    recovered: (node, seconds) => {
      options.logger.info({ node: node.name, after_seconds: seconds }, 'node recovered');
      options.onNodeHealth?.(node.name, 0);
    },
    logsLimitLearned: (node) => {
      const { blockRange, results } = node.logsLimits;
      const learned = {
        node: node.name,
        max_logs_block_range: blockRange,
        max_logs_results: results,
      };
      options.logger.info(learned, 'eth_getLogs limit learned from the node');
    },
  };
}

/** What routing reads besides a chain's table and policies: clock, metrics, events, budgets. */
export function routeContextOf(
  options: ProxyServerOptions,
  metrics: ProxyMetrics,
  clock: Clock,
): Omit<RouteContext, 'table' | 'policies'> {
  const server = options.config.server;
  return {
    clock,
    metrics,
    events: routeEventsOf(options),
    budgetMs: options.budgetMs ?? server.requestTimeoutMs,
    attemptTimeoutMs: options.attemptTimeoutMs ?? server.attemptTimeoutMs,
  };
}

/** What every chain's requests share (keys, counts, limits…), from `[server]` and `[keys]`. */
export function sharedContextOf(
  options: ProxyServerOptions,
  metrics: ProxyMetrics,
  clock: Clock,
): SharedHandlerContext {
  const server = options.config.server;
  return {
    registry: options.registry,
    metrics,
    clock,
    logger: options.logger,
    maxBodyBytes: server.maxBodyBytes,
    maxBatchSize: server.maxBatchSize,
    compressionMinBytes: server.compressionMinBytes,
    trustedProxies: trustedProxyList(server.trustedProxies),
    accessLog: options.accessLog ?? false,
    counts: new Float64Array(REQUEST_OUTCOMES.length),
    drain: { active: false },
    routingHeaders: server.routingHeaders,
    keys: new ClientKeys(options.config.keys, server.requireKey === true, clock),
    cors: CorsPolicy.from(server.corsOrigins),
    creditsRemainingHeader: server.creditsRemainingHeader === true,
  };
}
