/**
 * The WebSocket series, read from the WebSocket side's snapshot at scrape time: nothing is
 * recorded per notification, so fan-out costs no metric work. Every label value a dashboard
 * plots exists at 0 (failover reasons, gap-fill kinds, refusal reasons, each configured node).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { GAP_FILL_KINDS, type WsSnapshot } from './metrics.js';

/** Why subscriptions leave a node (label `reason` of cascade_ws_failovers_total). */
export const WS_FAILOVER_REASONS = [
  'dropped',
  'stalled',
  'penalized',
  'over_quota',
  'cordoned',
  'removed',
  'reconfigured',
] as const;
/** Streams that have a gap fill (label `kind` of cascade_ws_gap_fills_total). */
export const WS_GAP_FILL_KINDS = GAP_FILL_KINDS;
/** Why an upgrade is refused (label `reason` of cascade_ws_rejected_upgrades_total). */
export const WS_REJECT_REASONS = ['ip_limit', 'path', 'origin', 'shutting_down'] as const;

/** An empty snapshot: the series before any WebSocket side exists. */
export const EMPTY_WS_SNAPSHOT: WsSnapshot = {
  clientConnections: 0,
  clientSubscriptions: 0,
  upstreamSubscriptions: 0,
  delivered: 0,
  slowClientCloses: 0,
  noNodeCloses: 0,
  rejectedUpgrades: [],
  gapFills: [],
  gapFillNotifications: 0,
  nodes: [],
};

function lookup(pairs: ReadonlyArray<readonly [string, number]>, key: string): number {
  return pairs.find(([name]) => name === key)?.[1] ?? 0;
}

/** Registers the WebSocket series on `registry`; `read` returns the current snapshot. */
export function registerWsMetrics(registry: Registry, read: () => WsSnapshot): void {
  const registers = [registry];
  const gauge = (name: string, help: string, value: (s: WsSnapshot) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value(read()));
      },
    });
  const counter = (name: string, help: string, value: (s: WsSnapshot) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(value(read()));
      },
    });
  const perNode = (
    name: string,
    help: string,
    kind: 'gauge' | 'counter',
    value: (node: WsSnapshot['nodes'][number]) => number,
  ) => {
    const collect = function (this: Gauge<string> | Counter<string>) {
      this.reset();
      for (const node of read().nodes) {
        if (this instanceof Gauge) this.set({ node: node.name }, value(node));
        else this.inc({ node: node.name }, value(node));
      }
    };
    if (kind === 'gauge') new Gauge({ name, help, labelNames: ['node'], registers, collect });
    else new Counter({ name, help, labelNames: ['node'], registers, collect });
  };
  const labelled = (
    name: string,
    help: string,
    label: string,
    values: readonly string[],
    pairs: (s: WsSnapshot) => ReadonlyArray<readonly [string, number]>,
  ) =>
    new Counter({
      name,
      help,
      labelNames: [label],
      registers,
      collect() {
        this.reset();
        const current = pairs(read());
        for (const value of values) this.inc({ [label]: value }, lookup(current, value));
      },
    });

  gauge(
    'cascade_ws_client_connections',
    'Client WebSocket connections open',
    (s) => s.clientConnections,
  );
  gauge(
    'cascade_ws_client_subscriptions',
    'Subscriptions clients hold (shared upstream ones counted per client)',
    (s) => s.clientSubscriptions,
  );
  gauge(
    'cascade_ws_shared_subscriptions',
    'Upstream subscriptions, each shared by every client that asked for the same one',
    (s) => s.upstreamSubscriptions,
  );
  counter(
    'cascade_ws_delivered_notifications_total',
    'Notification messages sent to clients',
    (s) => s.delivered,
  );
  counter(
    'cascade_ws_slow_client_closes_total',
    'Clients closed (1008) because their outbound buffer passed the limit',
    (s) => s.slowClientCloses,
  );
  counter(
    'cascade_ws_no_node_closes_total',
    'Clients closed (1013) because no node could serve a subscription',
    (s) => s.noNodeCloses,
  );
  counter(
    'cascade_ws_gap_fill_notifications_total',
    'Notifications sent by gap fills after subscription moves',
    (s) => s.gapFillNotifications,
  );
  labelled(
    'cascade_ws_rejected_upgrades_total',
    'WebSocket upgrades refused',
    'reason',
    WS_REJECT_REASONS,
    (s) => s.rejectedUpgrades,
  );
  labelled(
    'cascade_ws_gap_fills_total',
    'Gap fills run after a subscription move, by stream kind',
    'kind',
    WS_GAP_FILL_KINDS,
    (s) => s.gapFills,
  );
  perNode(
    'cascade_ws_upstream_connections',
    'WebSocket connections open to a node',
    'gauge',
    (n) => n.sockets,
  );
  perNode(
    'cascade_ws_upstream_subscriptions',
    'Upstream subscriptions on a node',
    'gauge',
    (n) => n.subscriptions,
  );
  perNode(
    'cascade_ws_upstream_notifications_total',
    'Notifications received from a node',
    'counter',
    (n) => n.notifications,
  );
  perNode(
    'cascade_ws_upstream_received_bytes_total',
    'Bytes received on WebSocket connections to a node',
    'counter',
    (n) => n.bytes,
  );
  new Counter({
    name: 'cascade_ws_failovers_total',
    help: 'Subscriptions moved off a node, by reason',
    labelNames: ['node', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const node of read().nodes) {
        for (const reason of WS_FAILOVER_REASONS)
          this.inc({ node: node.name, reason }, lookup(node.failovers, reason));
      }
    },
  });
}
