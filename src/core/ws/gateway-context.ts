/** What every client session of a gateway shares: routing and the cache, the hub, limits, counters. */
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import {
  DEFAULT_WS_CONNECTIONS_PER_IP,
  DEFAULT_WS_MAX_BUFFERED_BYTES,
  DEFAULT_WS_MESSAGES_PER_SECOND,
  DEFAULT_WS_SUBSCRIPTIONS_PER_CONNECTION,
} from '../config/server-section.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import type { ServingContext } from '../serving/serving-context.js';
import type { SubscriptionHub } from './subscription-hub.js';
import type { UpstreamTiming } from './upstream-socket.js';

/** Per-client limits, from `[server]`. */
export interface WsLimits {
  readonly connectionsPerIp: number;
  readonly subscriptionsPerConnection: number;
  readonly messagesPerSecond: number;
  readonly maxBufferedBytes: number;
  /** Largest inbound message (server.max_body_bytes); a bigger one closes the socket with 1009. */
  readonly maxMessageBytes: number;
}

/** The limits `server` sets (defaults for keys a hand-built config leaves out). */
export function limitsOf(server: ServerConfig): WsLimits {
  return {
    connectionsPerIp: server.wsMaxConnectionsPerIp ?? DEFAULT_WS_CONNECTIONS_PER_IP,
    subscriptionsPerConnection:
      server.wsMaxSubscriptionsPerConnection ?? DEFAULT_WS_SUBSCRIPTIONS_PER_CONNECTION,
    messagesPerSecond: server.wsMaxMessagesPerSecond ?? DEFAULT_WS_MESSAGES_PER_SECOND,
    maxBufferedBytes: server.wsMaxBufferedBytes ?? DEFAULT_WS_MAX_BUFFERED_BYTES,
    maxMessageBytes: server.maxBodyBytes,
  };
}

/** Timings of the upstream side (tests shorten them). */
export interface WsTuning extends UpstreamTiming {
  /** A socket left without subscriptions is closed after this long. */
  readonly idleCloseMs: number;
  /** How long a failover looks for a node before closing clients with 1013. */
  readonly failoverBudgetMs: number;
  /** How often subscriptions are checked against penalties, quotas and reloads. */
  readonly tickMs: number;
}

/** Production timings: a stall is noticed within 10–15 s (two unanswered 5 s pings). */
export const DEFAULT_WS_TUNING: WsTuning = {
  connectTimeoutMs: 5000,
  requestTimeoutMs: 10_000,
  pingIntervalMs: 5000,
  idleCloseMs: 30_000,
  failoverBudgetMs: 10_000,
  tickMs: 1000,
};

/** Counters the gateway keeps (read at scrape time). */
export interface GatewayCounters {
  slowClientCloses: number;
  /** Upgrades refused, by reason (`ip_limit`, `path`, `origin`, `shutting_down`). */
  readonly rejectedUpgrades: Map<string, number>;
}

/** What sessions share: the serving layer's context (routing, the cache) and the socket's own. */
export interface GatewayContext extends ServingContext {
  readonly registry: MethodRegistry;
  readonly logger: Logger;
  readonly hub: SubscriptionHub;
  readonly limits: WsLimits;
  readonly maxBatchSize: number;
  readonly counters: GatewayCounters;
  /** The proxy's tally of requests answered (serving/request-record.ts: the shutdown summary). */
  readonly counts: Float64Array;
}
