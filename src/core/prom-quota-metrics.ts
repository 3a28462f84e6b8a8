/**
 * The quota gauges (`rpc_node_quota_*`), read at scrape time from the ledger through `source`:
 * usage booked in the period, the spillover threshold and when the period ends.
 */
import { Gauge, type Registry } from 'prom-client';
import type { QuotaSample } from './metrics.js';

/** Registers the quota gauges on `registry`, fed by `source`. */
export function registerQuotaGauges(
  registry: Registry,
  source: () => readonly QuotaSample[],
): void {
  const registers = [registry];
  new Gauge({
    name: 'rpc_node_quota_used',
    help: 'Usage a node has booked in the current billing period',
    labelNames: ['node'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const sample of source()) this.set({ node: sample.name }, sample.used);
    },
  });
  new Gauge({
    name: 'rpc_node_quota_threshold',
    help: 'Usage past which the router stops routing to a node',
    labelNames: ['node'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const sample of source()) this.set({ node: sample.name }, sample.threshold);
    },
  });
  new Gauge({
    name: 'rpc_node_quota_period_end_timestamp_seconds',
    help: "When a node's current billing period ends (its next reset, 00:00 UTC), Unix time",
    labelNames: ['node'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const sample of source()) {
        if (sample.periodEnd !== undefined) this.set({ node: sample.name }, sample.periodEnd);
      }
    },
  });
}
