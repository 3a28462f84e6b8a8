/**
 * How tests drive a mock node's WebSocket endpoint: the faults it can be switched to, the
 * counters it keeps, and the control surface the mock node exposes as `ws`.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** What a node's WebSocket endpoint does wrong. */
export type MockWsFault =
  | { readonly kind: 'none' }
  /**
   * Connections stay open and say nothing: no notifications (they are skipped, not queued), no
   * pongs, and what clients send waits unread until the stall ends.
   */
  | { readonly kind: 'stall' }
  /** Subscribe calls get an error (default: agave's "Node subscription limit reached"). */
  | { readonly kind: 'refuse_subscribe'; readonly code?: number; readonly message?: string }
  /** Upgrades are answered with this HTTP status (default 503). */
  | { readonly kind: 'refuse_connect'; readonly status?: number };

/** Counters of a node's WebSocket endpoint. */
export interface MockWsStats {
  /** Connections open now. */
  connections: number;
  /** Connections accepted since start. */
  accepted: number;
  /** Subscriptions open now, over every connection. */
  subscriptions: number;
  /** Subscribe calls answered with an id, per subscribe method (eth_subscribe by kind). */
  subscribes: Record<string, number>;
  unsubscribes: number;
  notifications: number;
  /** Plain JSON-RPC calls answered over the socket. */
  requests: number;
}

/** Test control of a node's WebSocket endpoint. */
export interface MockWsControl {
  setFault(fault: MockWsFault): void;
  /** Destroys every open connection now, without a close frame (a provider restarting). */
  drop(): void;
  stats(): MockWsStats;
  /** The request headers of every upgrade accepted so far (tests check credentials). */
  upgradeHeaders(): readonly IncomingHttpHeaders[];
}
