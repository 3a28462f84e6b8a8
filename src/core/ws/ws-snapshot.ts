/** The WebSocket side's numbers, gathered at scrape time (nothing is counted twice per event). */
import type { WsSnapshot } from '../metrics.js';
import type { RoutingTable } from '../routing/routing-table.js';
import type { GatewayCounters } from './gateway-context.js';
import type { SubscriptionHub } from './subscription-hub.js';

/** One chain's hub and the table of its nodes. */
export interface HubPart {
  readonly hub: SubscriptionHub;
  readonly table: RoutingTable;
}

/**
 * Builds the snapshot /metrics renders, summed over every chain's hub; every configured node
 * appears, at 0 if idle, and so does a node a reload removed once the WebSocket side counted
 * something for it — the subscriptions leave a removed node after it is gone from the table,
 * and its `removed` failovers (and its sockets until they close) must still show.
 */
export function wsSnapshot(
  clientConnections: number,
  counters: GatewayCounters,
  parts: readonly HubPart[],
): WsSnapshot {
  const gapFills = new Map<string, number>();
  let clientSubscriptions = 0;
  let upstreamSubscriptions = 0;
  let delivered = 0;
  let noNodeCloses = 0;
  let gapFillNotifications = 0;
  const nodes: WsSnapshot['nodes'][number][] = [];
  for (const { hub, table } of parts) {
    const counts = hub.counts();
    clientSubscriptions += counts.clients;
    upstreamSubscriptions += counts.upstream;
    delivered += hub.counters.delivered;
    noNodeCloses += hub.counters.noNodeCloses;
    gapFillNotifications += hub.counters.gapFillNotifications;
    for (const [kind, n] of hub.counters.gapFills)
      gapFills.set(kind, (gapFills.get(kind) ?? 0) + n);
    const upstream = hub.upstreamByNode();
    for (const name of namesOf(table, hub)) {
      const state = hub.pool.snapshot(name);
      nodes.push({
        name,
        sockets: state?.sockets ?? 0,
        subscriptions: upstream.get(name) ?? 0,
        notifications: state?.counters.notifications ?? 0,
        bytes: state?.counters.bytes ?? 0,
        failovers: [...(state?.counters.failovers ?? [])],
      });
    }
  }
  return {
    clientConnections,
    clientSubscriptions,
    upstreamSubscriptions,
    delivered,
    slowClientCloses: counters.slowClientCloses,
    noNodeCloses,
    rejectedUpgrades: [...counters.rejectedUpgrades],
    gapFills: [...gapFills],
    gapFillNotifications,
    nodes,
  };
}

/** The configured nodes in table order, then the removed ones the pool still keeps. */
function namesOf(table: RoutingTable, hub: SubscriptionHub): string[] {
  const names = table.all.map((node) => node.name);
  const configured = new Set(names);
  for (const name of hub.pool.names()) if (!configured.has(name)) names.push(name);
  return names;
}
