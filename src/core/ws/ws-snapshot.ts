/** The WebSocket side's numbers, gathered at scrape time (nothing is counted twice per event). */
import type { WsSnapshot } from '../metrics.js';
import type { RoutingTable } from '../routing/routing-table.js';
import type { GatewayCounters } from './gateway-context.js';
import type { SubscriptionHub } from './subscription-hub.js';

/**
 * Builds the snapshot /metrics renders; every configured node appears, at 0 if idle, and so
 * does a node a reload removed once the WebSocket side counted something for it — the
 * subscriptions leave a removed node after it is gone from the table, and its
 * `removed` failovers (and its sockets until they close) must still show.
 */
export function wsSnapshot(
  clientConnections: number,
  counters: GatewayCounters,
  hub: SubscriptionHub,
  table: RoutingTable,
): WsSnapshot {
  const counts = hub.counts();
  const upstream = hub.upstreamByNode();
  return {
    clientConnections,
    clientSubscriptions: counts.clients,
    upstreamSubscriptions: counts.upstream,
    delivered: hub.counters.delivered,
    slowClientCloses: counters.slowClientCloses,
    noNodeCloses: hub.counters.noNodeCloses,
    rejectedUpgrades: [...counters.rejectedUpgrades],
    gapFills: [...hub.counters.gapFills],
    gapFillNotifications: hub.counters.gapFillNotifications,
    nodes: namesOf(table, hub).map((name) => {
      const state = hub.pool.snapshot(name);
      return {
        name,
        sockets: state?.sockets ?? 0,
        subscriptions: upstream.get(name) ?? 0,
        notifications: state?.counters.notifications ?? 0,
        bytes: state?.counters.bytes ?? 0,
        failovers: [...(state?.counters.failovers ?? [])],
      };
    }),
  };
}

/** The configured nodes in table order, then the removed ones the pool still keeps. */
function namesOf(table: RoutingTable, hub: SubscriptionHub): string[] {
  const names = table.all.map((node) => node.name);
  const configured = new Set(names);
  for (const name of hub.pool.names()) if (!configured.has(name)) names.push(name);
  return names;
}
