import type { NodeConfig } from '../config/types.js';
import { rollover, type PeriodNode, type RolloverEvent } from '../quota/rollover.js';
import type { UsageLedger } from '../quota/usage-ledger.js';
import type { CoordinatedNode } from './redis-coordinator.js';

/**
 * The nodes to coordinate, with their limits and current billing period. Billing periods roll
 * over here, at every sync: with replicas the usage key names the period, so every replica
 * must switch keys at the boundary, not at its next quotas.json flush.
 */
export function coordinatedNodes(
  /** Nodes, and provider accounts as their usage entries (`account:NAME`, config-chains.ts). */
  configs: readonly Pick<NodeConfig, 'name' | 'resetDay' | 'rpsLimit' | 'maxConcurrent'>[],
  ledger: UsageLedger,
  wallNow: number,
  onRollover: (events: readonly RolloverEvent[]) => void,
  /** More counters synced like nodes' usage, with the limits to split (client keys). */
  counted: readonly CountedUsage[] = [],
): CoordinatedNode[] {
  const all: readonly PeriodNode[] = counted.length === 0 ? configs : [...configs, ...counted];
  const events = rollover(ledger, all, new Date(wallNow));
  if (events.length > 0) onRollover(events);
  const nodes: CoordinatedNode[] = configs.map((config) => ({
    name: config.name,
    rpsLimit: config.rpsLimit,
    concurrentLimit: config.maxConcurrent,
    period: ledger.periodStart(config.name)!,
  }));
  for (const { name, rpsLimit, concurrentLimit, perIpLimit } of counted)
    nodes.push({
      name,
      rpsLimit: rpsLimit ?? Infinity,
      concurrentLimit: concurrentLimit ?? Infinity,
      ...(perIpLimit === undefined ? {} : { perIpLimit }),
      period: ledger.periodStart(name)!,
    });
  return nodes;
}

/** A counter kept beside the nodes' (a client key's usage) and the limits shared with it. */
export interface CountedUsage extends PeriodNode {
  readonly rpsLimit?: number | undefined;
  readonly concurrentLimit?: number | undefined;
  /** A per-client-IP rate (a key's per_ip_rps), split with the rate's demand. */
  readonly perIpLimit?: number | undefined;
}
