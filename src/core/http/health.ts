import type { RoutingTable } from '../routing/routing-table.js';

/** One node in GET /health. */
export interface NodeHealth {
  readonly name: string;
  readonly tier: number;
  readonly status: 'up' | 'down' | 'unknown';
  readonly latency_ms: number | null;
}

/** The GET /health document (CascadeRPC's shape and key order). */
export interface HealthReport {
  readonly status: 'ok' | 'degraded' | 'critical';
  readonly active_nodes: number;
  readonly total_nodes: number;
  readonly nodes: readonly NodeHealth[];
}

/**
 * Health from state the traffic already produced — never by probing. A penalized node is
 * down; one never answered successfully is unknown (and counts as active: the router will
 * offer it a request); otherwise up with its latency EMA in whole milliseconds.
 */
export function healthReport(table: RoutingTable, now: number): HealthReport {
  const nodes = table.all.map((node): NodeHealth => {
    if (node.penalty.isActive(now)) {
      return { name: node.name, tier: node.config.tier, status: 'down', latency_ms: null };
    }
    if (!node.ema.isMeasured) {
      return { name: node.name, tier: node.config.tier, status: 'unknown', latency_ms: null };
    }
    return {
      name: node.name,
      tier: node.config.tier,
      status: 'up',
      latency_ms: Math.floor(node.ema.micros / 1000),
    };
  });
  const active = nodes.filter((node) => node.status !== 'down').length;
  const status = active === 0 ? 'critical' : active < nodes.length ? 'degraded' : 'ok';
  return { status, active_nodes: active, total_nodes: nodes.length, nodes };
}
