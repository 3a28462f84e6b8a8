/** What the ranking tick and the quota gauges read off the nodes (monitoring.ts and server.ts publish them). */
import { nodeChainReport } from '../chain/chain-report.js';
import { chainOf } from '../config/config-chains.js';
import type { ChainSample, NodeHealthSample, QuotaSample, TopologySample } from '../metrics.js';
import type { UpstreamNode } from '../node/upstream-node.js';
import { nextReset } from '../quota/billing-period.js';
import type { Topology } from '../routing/topology.js';

/** Each node's health at `now`, for the health gauges. */
export function healthSamples(nodes: readonly UpstreamNode[], now: number): NodeHealthSample[] {
  return nodes.map((node) => ({
    name: node.name,
    tier: node.config.tier,
    healthy: !node.penalty.isActive(now),
    emaSeconds: node.ema.isMeasured ? node.ema.micros / 1e6 : NaN,
    cordoned: node.cordoned,
  }));
}

/** Each node's credit usage against its threshold, with its period's end (Unix seconds). */
export function quotaSamples(nodes: readonly UpstreamNode[], today: Date): QuotaSample[] {
  return nodes.map((node) => ({
    name: node.name,
    used: node.usage.used,
    threshold: node.config.spilloverThreshold,
    periodEnd: Date.parse(`${nextReset(today, node.config.resetDay)}T00:00:00Z`) / 1000,
  }));
}

/** Every node's heads and lag now, for rpc_node_head and rpc_node_lag. */
export function chainSamples(topology: Topology, now: number): ChainSample[] {
  const samples: ChainSample[] = [];
  for (const slot of topology.slots()) {
    const chain = slot.state;
    if (!chain.active) continue;
    for (const node of slot.table.all) {
      const report = nodeChainReport(chain, node.heads, now);
      samples.push({ node: node.name, heads: report.heads, lag: report.lag });
    }
  }
  return samples;
}

/** Every node's chain, account and tier, and every account's pool, for rpc_node_info and rpc_account_*. */
export function topologySample(topology: Topology): TopologySample {
  return {
    nodes: topology.table.all.map(({ config }) => ({
      name: config.name,
      chain: chainOf(config),
      account: config.account,
      tier: config.tier,
    })),
    accounts: topology.accounts().map(({ config, usage }) => ({
      name: config.name,
      used: usage.used,
      quota: config.monthlyLimit ?? Infinity,
      threshold: config.spilloverThreshold,
    })),
  };
}
