import type { Clock } from '../clock.js';
import type { AccountEntry } from '../config/config-chains.js';
import type { PeriodNode, RolloverEvent } from '../quota/rollover.js';
import type { UsageLedger } from '../quota/usage-ledger.js';
import type { Topology } from '../routing/topology.js';
import { coordinatedNodes } from './coordinated-nodes.js';
import type { ShareTarget } from './redis-coordinator.js';

/** This process's nodes and accounts as the Redis coordinator sees them (one process serving). */
export function topologyTarget(
  topology: Topology,
  /** The provider accounts in force, as usage entries. */
  accounts: () => readonly AccountEntry[],
  ledger: UsageLedger,
  clock: Clock,
  onRollover: (events: readonly RolloverEvent[]) => void,
  /** More counters to sync, with no limits (client keys' usage). */
  counted: () => readonly PeriodNode[] = () => [],
): ShareTarget {
  return {
    nodes: () =>
      coordinatedNodes(
        [...topology.table.all.map((node) => node.config), ...accounts()],
        ledger,
        clock.wallNow(),
        onRollover,
        counted(),
      ),
    takeDemand: (name) => topology.limited(name)?.takeDemand() ?? { rps: 0, concurrent: 0 },
    applyShare: (name, rps, concurrent) =>
      topology.limited(name)?.setShare(rps, concurrent, clock.now()),
  };
}
