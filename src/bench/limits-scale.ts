/**
 * `--limits-scale auto`: the factor on a config's rps_limit values that makes a load of `rps`
 * fill tier 0 to its caps and spill about half of tier 1's caps' worth into tier 1 — the shape
 * of the seed's spillover table, whatever the machine sustains.
 */

/** Share of the second tier's caps the demand should reach. */
export const AUTO_TIER1_SHARE = 0.5;

/** A node's place and limit (Infinity = none). */
export interface TierLimit {
  readonly tier: number;
  readonly rpsLimit: number;
}

/** Sum of the finite rps limits of `tier`. */
function capOf(nodes: readonly TierLimit[], tier: number | undefined): number {
  return nodes
    .filter((n) => n.tier === tier && Number.isFinite(n.rpsLimit))
    .reduce((sum, n) => sum + n.rpsLimit, 0);
}

/** The scale for `rps` of demand, to three significant digits; 1 when there is nothing to scale. */
export function autoLimitsScale(rps: number, nodes: readonly TierLimit[]): number {
  const tiers = [...new Set(nodes.map((n) => n.tier))].sort((a, b) => a - b);
  const first = capOf(nodes, tiers[0]);
  const second = tiers.length > 1 ? capOf(nodes, tiers[1]) : first;
  const target = first + AUTO_TIER1_SHARE * second;
  if (target <= 0 || !(rps > 0)) return 1;
  return Number((rps / target).toPrecision(3));
}

/** `limit × scale` rounded, at least 1; Infinity stays (and a null scale means no limit). */
export function scaleLimit(limit: number, scale: number | null): number {
  if (scale === null || !Number.isFinite(limit)) return Infinity;
  return Math.max(1, Math.round(limit * scale));
}
