import type { NodeConfig } from '../config/types.js';
import { daysUntil, periodInForce, periodStart } from './billing-period.js';
import type { UsageLedger } from './usage-ledger.js';

/** What rollover needs to know about a node. */
export type PeriodNode = Pick<NodeConfig, 'name' | 'resetDay'>;

/** A gap between period starts longer than this means whole periods passed unseen (warn). */
export const LONG_GAP_DAYS = 62;

/** A node had no marker and took the current period's, keeping its usage. */
export interface AdoptedEvent {
  readonly kind: 'adopted';
  readonly name: string;
  readonly from: undefined;
  readonly to: string;
  readonly usedBefore: number;
}

/** A node's period ended: usage went to 0 and the marker moved to the current start. */
export interface ResetEvent {
  readonly kind: 'reset';
  readonly name: string;
  readonly from: string;
  readonly to: string;
  readonly usedBefore: number;
  /** Days from the old marker to the new one. */
  readonly gapDays: number;
  /** True when `gapDays > LONG_GAP_DAYS`: periods were skipped (process down, clock jump). */
  readonly longGap: boolean;
}

/** What rollover did to one node, for the log. */
export type RolloverEvent = AdoptedEvent | ResetEvent;

/**
 * Moves every live node into the billing period `today` (UTC) belongs to. No marker ⇒ adopt the
 * current start, keeping usage. Marker at or after the current start (same period, or the clock
 * went back) ⇒ nothing. Marker before it ⇒ usage 0 and marker := current start, once however many
 * periods were skipped. Returns one event per node changed.
 */
export function rollover(
  ledger: UsageLedger,
  nodes: readonly PeriodNode[],
  today: Date | string,
): RolloverEvent[] {
  const events: RolloverEvent[] = [];
  for (const node of nodes) {
    const event = rolloverNode(ledger, node, today);
    if (event !== undefined) events.push(event);
  }
  return events;
}

/**
 * Gives a node that has no period marker (one added by a reload) the current period's start
 * at once, so its usage is persisted from the next write on. Returns the start it set, or
 * undefined when the node already had a marker (a surviving node keeps its own).
 */
export function assignMarker(
  ledger: UsageLedger,
  node: PeriodNode,
  today: Date | string,
): string | undefined {
  if (ledger.periodStart(node.name) !== undefined) return undefined;
  const start = periodStart(today, node.resetDay);
  ledger.setPeriodStart(node.name, start);
  return start;
}

function rolloverNode(
  ledger: UsageLedger,
  node: PeriodNode,
  today: Date | string,
): RolloverEvent | undefined {
  const { name } = node;
  const current = periodStart(today, node.resetDay);
  const marker = ledger.periodStart(name);
  const usedBefore = ledger.counter(name).used;
  if (marker === undefined) {
    ledger.setPeriodStart(name, current);
    return { kind: 'adopted', name, from: undefined, to: current, usedBefore };
  }
  if (periodInForce(marker, current)) return undefined;
  ledger.reset(name);
  ledger.setPeriodStart(name, current);
  const gapDays = daysUntil(marker, current);
  return {
    kind: 'reset',
    name,
    from: marker,
    to: current,
    usedBefore,
    gapDays,
    longGap: gapDays > LONG_GAP_DAYS,
  };
}
