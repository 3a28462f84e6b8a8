/**
 * The series of chains and provider accounts (issue 28). Existing series keep their labels
 * (dashboards and alerts written for them stay valid); what chain a node serves and what
 * account bills it is said once, by `rpc_node_info{node,chain,account,tier} 1`, which a query
 * joins in: `… * on(node) group_left(chain) rpc_node_info`. Per-chain client requests count
 * in `rpc_chain_requests_total{chain,outcome}`, once per request as rpc_requests_total does.
 * Account pools are gauges read at scrape time like the nodes' quota gauges; an unmetered
 * account's quota and threshold render as `+Inf`.
 */
import { Gauge, type Registry } from 'prom-client';
import { IndexedCounter } from './indexed-series.js';
import { REQUEST_OUTCOMES, type ChainMetrics, type TopologySample } from './metrics.js';

/** rpc_chain_requests_total: each chain's four outcome series, from the chain's first serving. */
export class ChainRequestCounters {
  readonly #requests: IndexedCounter;
  readonly #chains = new Map<string, { recorder: ChainMetrics; series: readonly number[] }>();

  constructor(registry: Registry) {
    this.#requests = new IndexedCounter(
      'rpc_chain_requests_total',
      'Client requests by the chain they were sent to (every door: HTTP, batches, WebSocket)',
      registry,
    );
  }

  /** The recorders of chain `name` (its series created at 0 the first time). */
  forChain(name: string): ChainMetrics {
    const known = this.#chains.get(name);
    if (known !== undefined) return known.recorder;
    const counter = this.#requests;
    const series = REQUEST_OUTCOMES.map((outcome) => counter.add({ chain: name, outcome }));
    const recorder: ChainMetrics = {
      request(outcome) {
        counter.inc(series[outcome]!);
      },
    };
    this.#chains.set(name, { recorder, series });
    return recorder;
  }

  /** Stops exporting a chain's series (a reload removed the chain). */
  remove(name: string): void {
    const known = this.#chains.get(name);
    if (known === undefined) return;
    this.#chains.delete(name);
    for (const index of known.series) this.#requests.remove(index);
  }
}

/** Registers rpc_node_info and the account gauges on `registry`, fed by `source`. */
export function registerTopologyGauges(
  registry: Registry,
  source: () => TopologySample | undefined,
): void {
  const registers = [registry];
  new Gauge({
    name: 'rpc_node_info',
    help: 'Always 1: the chain a node serves, the provider account billed for it (empty: none) and its tier',
    labelNames: ['node', 'chain', 'account', 'tier'],
    registers,
    aggregator: 'max',
    collect() {
      this.reset();
      for (const node of source()?.nodes ?? [])
        this.set(
          {
            node: node.name,
            chain: node.chain,
            account: node.account ?? '',
            tier: String(node.tier),
          },
          1,
        );
    },
  });
  const accountGauge = (
    name: string,
    help: string,
    pick: (account: TopologySample['accounts'][number]) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['account'],
      registers,
      aggregator: 'max',
      collect() {
        this.reset();
        for (const account of source()?.accounts ?? [])
          this.set({ account: account.name }, pick(account));
      },
    });
  accountGauge(
    'rpc_account_credits_used',
    "Credits a provider account's nodes booked in its current billing period (its shared pool)",
    (account) => account.used,
  );
  accountGauge(
    'rpc_account_quota',
    "A provider account's monthly_limit; +Inf when unmetered",
    (account) => account.quota,
  );
  accountGauge(
    'rpc_account_quota_threshold',
    'Pool usage past which every node of a provider account is skipped; +Inf when unmetered',
    (account) => account.threshold,
  );
}
