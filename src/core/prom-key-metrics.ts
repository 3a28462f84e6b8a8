/**
 * The client-key series (issue 27), read at scrape time from the keys in force: calls by key
 * and outcome (`allowed`, or why the key check refused them), credits each key spent this
 * period and its budget. The label is the key's name, never its secret; calls that came with
 * no usable key count under `key=""`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { KeySample } from './metrics.js';

/** Registers the key series on `registry`, fed by `source`. */
export function registerKeyMetrics(registry: Registry, source: () => readonly KeySample[]): void {
  const registers = [registry];
  new Counter({
    name: 'rpc_key_requests_total',
    help: 'Calls by client key and outcome (allowed, or the reason the key check refused them)',
    labelNames: ['key', 'outcome'],
    registers,
    collect() {
      this.reset();
      for (const sample of source())
        for (const [outcome, count] of sample.counts)
          this.inc({ key: sample.name, outcome }, count);
    },
  });
  new Gauge({
    name: 'rpc_key_credits_used',
    help: "Credits a client key spent in its current billing period (the serving nodes' prices)",
    labelNames: ['key'],
    registers,
    // Every worker sees the whole proxy's usage (the primary's ledger): the freshest is the highest.
    aggregator: 'max',
    collect() {
      this.reset();
      for (const sample of source())
        if (sample.name !== '') this.set({ key: sample.name }, sample.used);
    },
  });
  new Gauge({
    name: 'rpc_key_budget',
    help: 'Credits a client key may spend per billing period (keys with monthly_credits only)',
    labelNames: ['key'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const sample of source())
        if (sample.budget !== undefined) this.set({ key: sample.name }, sample.budget);
    },
  });
}
