/** The WebSocket side's numbers, gathered at scrape time (nothing is counted twice per event). */
import type { WsSnapshot } from '../metrics.js';
import type { RoutingTable } from '../routing/routing-table.js';
import type { GatewayCounters } from './gateway-context.js';
import type { SubscriptionHub } from './subscription-hub.js';

/** Builds the snapshot /metrics renders; every configured node appears, at 0 if idle. */
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
    nodes: table.all.map((node) => {
      const state = hub.pool.snapshot(node.name);
      return {
        name: node.name,
        sockets: state?.sockets ?? 0,
        subscriptions: upstream.get(node.name) ?? 0,
        notifications: state?.counters.notifications ?? 0,
        bytes: state?.counters.bytes ?? 0,
        failovers: [...(state?.counters.failovers ?? [])],
      };
    }),
  };
}
