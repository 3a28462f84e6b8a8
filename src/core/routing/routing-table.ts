import type { ChainState } from '../chain/chain-state.js';
import type { UpstreamNode } from '../node/upstream-node.js';

/**
 * An immutable snapshot of the node set: `all` in config order (for /health, quotas and
 * gauges) and `ranked` in walk order. Swapped by reference on every ranking tick and reload,
 * so a request reads it with one property load and never sees a half-built table.
 */
export interface RoutingTable {
  readonly all: readonly UpstreamNode[];
  readonly ranked: readonly UpstreamNode[];
  /** Walk order of `latency` methods: measured latency first, whatever the tier. */
  readonly byLatency: readonly UpstreamNode[];
  /** What the nodes' answers showed of the chain (absent: lag is never judged). */
  readonly chain?: ChainState | undefined;
}

/**
 * Walk order: tier ascending, then measured latency ascending; unmeasured nodes last in their
 * tier; ties keep config order (Array.prototype.sort is stable). Penalized nodes stay in the
 * list — the request path skips them, and fail-open still needs them.
 */
export function rankNodes(all: readonly UpstreamNode[]): UpstreamNode[] {
  const keyed = all.map((node, index) => ({
    node,
    index,
    tier: node.config.tier,
    ema: node.ema.micros,
  }));
  keyed.sort((a, b) => a.tier - b.tier || compareEma(a.ema, b.ema) || a.index - b.index);
  return keyed.map((entry) => entry.node);
}

function compareEma(a: number, b: number): number {
  if (a === b) return 0;
  if (a === Infinity) return 1;
  if (b === Infinity) return -1;
  return a - b;
}

/**
 * The `latency` strategy's walk order: measured latency ascending regardless of tier; nodes
 * not measured yet come after, in cost order (so with nothing measured it equals `ranked`).
 */
export function rankByLatency(ranked: readonly UpstreamNode[]): UpstreamNode[] {
  const measured = ranked.filter((node) => node.ema.micros !== Infinity);
  // A stable sort: equal latencies keep their cost order.
  measured.sort((a, b) => a.ema.micros - b.ema.micros);
  return [...measured, ...ranked.filter((node) => node.ema.micros === Infinity)];
}

/** A table over `all`, ranked now. */
export function buildTable(all: readonly UpstreamNode[], chain?: ChainState): RoutingTable {
  const ranked = rankNodes(all);
  return { all, ranked, byLatency: rankByLatency(ranked), chain };
}
