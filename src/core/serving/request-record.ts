/**
 * The record step every door shares: an answered request counts once in `rpc_requests_total`
 * and its duration histogram, once in its chain's `rpc_chain_requests_total`, and once in the
 * tally the shutdown summary reads (ProxyServer.requestCounts()) — whether it came over HTTP
 * or a socket, routed or refused.
 */
import type { RouteContext } from '../routing/route-context.js';

/** Where requests are recorded: the metrics (via routing's context) and the summary's tally. */
export interface RequestTally {
  readonly route: RouteContext;
  /** Requests answered, by REQUEST_OUTCOMES index. */
  readonly counts: Float64Array;
}

/** Records one answered request (`startedAt`: clock reading on arrival); returns its seconds. */
export function recordRequest(tally: RequestTally, outcome: number, startedAt: number): number {
  const route = tally.route;
  const seconds = (route.clock.now() - startedAt) / 1000;
  tally.counts[outcome]!++;
  route.metrics.request(outcome, seconds);
  route.chainMetrics?.request(outcome);
  return seconds;
}
