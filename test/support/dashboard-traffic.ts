/**
 * Getting a proxy under test into the state the dashboard panels show: traffic of every kind,
 * and the quota period-end gauge.
 */
import type { AccountConfig } from '../../src/core/config/types.js';
import type { ProxyServer } from '../../src/core/http/server.js';
import { nextReset } from '../../src/core/quota/billing-period.js';

/** The provider account the dashboard tests bill their premium node to: its panels need one. */
export const DASHBOARD_ACCOUNT: AccountConfig = {
  name: 'plan',
  monthlyLimit: 1_000_000,
  resetDay: 1,
  rpsLimit: Infinity,
  maxConcurrent: Infinity,
  spilloverPercent: 95,
  spilloverThreshold: 950_000,
};

/** Unix seconds of 00:00 UTC on the next reset day of a node with `resetDay`. */
export function periodEndSeconds(resetDay: number, today = new Date()): number {
  return Date.parse(`${nextReset(today, resetDay)}T00:00:00Z`) / 1000;
}

/**
 * Makes sure the server exports `rpc_node_quota_period_end_timestamp_seconds`. Until
 * ProxyServer passes `periodEnd` in its quota source, installs the source it should register
 * (the same fields, plus each node's next reset), so the "Days left" panel has data to check.
 */
export async function ensurePeriodEnd(server: ProxyServer): Promise<void> {
  if ((await server.metrics.render()).includes('\nrpc_node_quota_period_end_timestamp_seconds{'))
    return;
  server.metrics.setQuotaSource(() =>
    server.topology.table.all.map((node) => ({
      name: node.name,
      used: node.usage.used,
      threshold: node.config.spilloverThreshold,
      periodEnd: periodEndSeconds(node.config.resetDay),
    })),
  );
}

/** Sends `count` rounds of traffic: calls of two methods, batches and unparsable bodies. */
export async function driveTraffic(url: string, count: number): Promise<void> {
  const post = async (body: string): Promise<void> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await response.arrayBuffer();
  };
  for (let i = 0; i < count; i++) {
    await post(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'getSlot' }));
    await post(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'getBalance', params: ['x'] }));
    if (i % 5 === 0) await post('not json');
    if (i % 2 === 0) {
      const batch = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getSlot' }));
      await post(JSON.stringify(batch.slice(0, 1 + (i % 3))));
    }
  }
}
