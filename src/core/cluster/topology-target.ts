import type { Clock } from '../clock.js';
import { rollover, type RolloverEvent } from '../quota/rollover.js';
import type { UsageLedger } from '../quota/usage-ledger.js';
import type { Topology } from '../routing/topology.js';
import type { CoordinatedNode, ShareTarget } from './redis-coordinator.js';

/**
 * This process's nodes as the Redis coordinator sees them: their limits, their demand, and
 * where shares go. Each sync also rolls billing periods over (the key names the period, so
 * every replica must switch keys at the boundary, not at its next quotas.json flush).
 */
export function topologyTarget(
  topology: Topology,
  ledger: UsageLedger,
  clock: Clock,
  onRollover: (events: readonly RolloverEvent[]) => void,
): ShareTarget {
  return {
    nodes(): CoordinatedNode[] {
      const all = topology.table.all;
      const events = rollover(
        ledger,
        all.map((node) => ({ name: node.name, resetDay: node.config.resetDay })),
        new Date(clock.wallNow()),
      );
      if (events.length > 0) onRollover(events);
      return all.map((node) => ({
        name: node.name,
        rpsLimit: node.config.rpsLimit,
        concurrentLimit: node.config.maxConcurrent,
        period: ledger.periodStart(node.name)!,
      }));
    },
    takeDemand: (name) => topology.node(name)?.takeDemand() ?? { rps: 0, concurrent: 0 },
    applyShare: (name, rps, concurrent) =>
      topology.node(name)?.setShare(rps, concurrent, clock.now()),
  };
}
