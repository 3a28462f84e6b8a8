import { Bound } from '../../src/core/chain/chain-state.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  allPanels,
  dashboardQueries,
  legendLabels,
  loadDashboard,
  substitute,
  variableRefs,
} from '../support/dashboard.js';
import { DASHBOARD_ACCOUNT, driveTraffic, ensurePeriodEnd } from '../support/dashboard-traffic.js';
import { startMultiChain, type MultiChain } from '../support/multi-chain.js';
import { promqlRefs } from '../support/promql-refs.js';
import { parseExposition, type Exposition } from '../../src/bench/prometheus-text.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';
import type { ProxyServer } from '../../src/core/http/server.js';

/** Labels Prometheus attaches to every scraped series (target labels). */
const TARGET_LABELS = new Set(['job', 'instance']);
/** Series Prometheus itself writes for each target. */
const SYNTHETIC_SERIES: Record<string, string[]> = { up: [], scrape_duration_seconds: [] };

/** What one scrape exports: series name → label → values seen. */
type SeriesIndex = Map<string, Map<string, Set<string>>>;

function indexOf(exposition: Exposition): SeriesIndex {
  const index: SeriesIndex = new Map();
  for (const sample of exposition.samples) {
    let labels = index.get(sample.name);
    if (!labels) index.set(sample.name, (labels = new Map<string, Set<string>>()));
    for (const [label, value] of Object.entries(sample.labels)) {
      let values = labels.get(label);
      if (!values) labels.set(label, (values = new Set()));
      values.add(value);
    }
  }
  for (const [name, labels] of Object.entries(SYNTHETIC_SERIES)) {
    index.set(name, new Map(labels.map((label) => [label, new Set<string>()])));
  }
  return index;
}

const LITERAL_ALTERNATIVES = /^[A-Za-z0-9_.+-]+(\|[A-Za-z0-9_.+-]+)*$/;

/**
 * Problems of one expression against what the server exports: unknown series (histogram
 * suffixes only on histograms), unknown labels, matcher values no series has, grouping and
 * legend labels no referenced series carries.
 */
function problemsOf(
  expr: string,
  legend: string | undefined,
  index: SeriesIndex,
  exposition: Exposition,
): string[] {
  const refs = promqlRefs(expr);
  const problems: string[] = [];
  const available = new Set(TARGET_LABELS);
  if (refs.selectors.length === 0) problems.push('refers to no metric');
  for (const { metric, matchers } of refs.selectors) {
    const labels = index.get(metric);
    if (!labels) {
      problems.push(`unknown series ${metric}`);
      continue;
    }
    const suffix = /_(bucket|sum|count)$/.exec(metric);
    const base = suffix ? exposition.families.get(metric.slice(0, suffix.index)) : undefined;
    if (suffix?.[1] === 'bucket' && base?.type !== 'histogram')
      problems.push(`${metric}: _bucket of a ${base?.type ?? 'missing'} metric`);
    for (const label of labels.keys()) available.add(label);
    for (const { label, op, value } of matchers) {
      if (TARGET_LABELS.has(label)) continue;
      const values = labels.get(label);
      if (!values) {
        problems.push(`${metric} has no label ${label}`);
        continue;
      }
      const literal = op === '=' || op === '!=' ? [value] : undefined;
      const alternatives = literal ?? (LITERAL_ALTERNATIVES.test(value) ? value.split('|') : []);
      for (const alternative of alternatives) {
        if (!values.has(alternative))
          problems.push(
            `${metric}{${label}${op}"${value}"}: no series has ${label}="${alternative}"`,
          );
      }
    }
  }
  for (const label of [...refs.grouping, ...legendLabels(legend)]) {
    if (!available.has(label)) problems.push(`label ${label} is on none of its series`);
  }
  return problems;
}

/**
 * The tier-1 node sees no traffic (sampling stays within a tier), so its head is recorded as
 * the tier-0 node's answers showed theirs: rpc_node_lag then has series for the lag panel.
 */
function showBothHeads(server: ProxyServer, chain: string, seen: string, unseen: string): void {
  const state = server.topology.slot(chain)!.state;
  const premium = server.topology.node(seen)!.heads;
  const backup = server.topology.node(unseen)!.heads;
  for (let slot = 0; slot < premium.values.length; slot++) {
    const value = premium.values[slot]!;
    if (value >= 0) state.observe(backup, slot, value, Bound.exact, premium.seenAt[slot]!);
  }
}

let harness: Harness;
let exposition: Exposition;
let index: SeriesIndex;

beforeAll(async () => {
  harness = await startHarness(
    [
      { name: 'premium', tier: 0, monthlyLimit: 10_000, rpsLimit: 50, account: 'plan' },
      { name: 'backup', tier: 1 },
    ],
    { accounts: [DASHBOARD_ACCOUNT] },
  );
  await ensurePeriodEnd(harness.server);
  await driveTraffic(harness.url, 20);
  showBothHeads(harness.server, 'default', 'premium', 'backup');
  exposition = parseExposition(await harness.metrics());
  index = indexOf(exposition);
});
afterAll(async () => {
  await harness.close();
});

const dashboard = loadDashboard();
const queries = dashboardQueries(dashboard).map((query) => ({
  ...query,
  expr: substitute(query.expr, { rateInterval: '1m', job: 'cascade' }),
}));

describe('the Grafana dashboard (monitoring/grafana/dashboards/cascade.json)', () => {
  it('is the provisioned dashboard uid "cascade" with unique panel ids on the Prometheus datasource', () => {
    expect(dashboard.uid).toBe('cascade');
    const panels = allPanels(dashboard);
    const ids = panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: 'prometheus' });
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
  });

  it('has a panel for every view the issue asks for', () => {
    const exprs = queries.map((q) => q.expr).join('\n');
    for (const needed of [
      /sum by \(outcome\) \(rate\(rpc_requests_total/,
      /histogram_quantile\(0\.5, sum by \(le\) \(rate\(rpc_request_duration_seconds_bucket/,
      /histogram_quantile\(0\.95, sum by \(le\) \(rate\(rpc_request_duration_seconds_bucket/,
      /histogram_quantile\(0\.99, sum by \(le\) \(rate\(rpc_request_duration_seconds_bucket/,
      /sum by \(node\) \(rate\(rpc_upstream_attempts_total/,
      /sum by \(node, outcome\) \(rate\(rpc_upstream_attempts_total/,
      /histogram_quantile\(0\.95, sum by \(node, le\) \(rate\(rpc_upstream_duration_seconds_bucket/,
      /rpc_upstream_skips_total\{[^}]*reason="rate_limit"/,
      /sum by \(node, reason\) \(rate\(rpc_upstream_skips_total/,
      /rpc_node_quota_used/,
      /rpc_node_quota_threshold/,
      /rpc_node_quota_period_end_timestamp_seconds\{[^}]*\} - time\(\)/,
      /rpc_healthy_nodes/,
      /rpc_node_healthy/,
      /rpc_node_latency_ema_seconds/,
      /rpc_sleep_queue_size/,
      /rpc_batch_size_bucket/,
      /sum by \(strategy\) \(rate\(cascade_strategy_attempts_total/,
      /sum by \(event\) \(rate\(cascade_hedges_total/,
      /sum by \(outcome\) \(rate\(cascade_write_outcomes_total/,
      /sum by \(result\) \(rate\(rpc_cache_requests_total/,
      /rpc_credits_saved_total/,
      /rpc_cache_bytes/,
      /rpc_cache_entries/,
      /rpc_node_head\{/,
      /rpc_node_lag\{/,
      /sum by \(node\) \(rate\(rpc_stale_answers_total/,
      /sum by \(node\) \(rate\(rpc_stale_credits_total/,
      /sum by \(chain, outcome\) \(rate\(rpc_chain_requests_total\{[^}]*chain=~/,
      /rpc_account_credits_used/,
      /rpc_account_quota\{[^}]*\} < \+Inf/,
      /rpc_account_quota_threshold\{[^}]*\} < \+Inf/,
      /group_left\(account, chain\) group by \(node, account, chain\) \(rpc_node_info/,
    ]) {
      expect(exprs).toMatch(needed);
    }
  });

  it.each(queries.map((q) => [`${q.panel} / ${q.refId}`, q] as const))(
    '%s refers only to series, labels and values the server exports',
    (_name, query) => {
      expect(problemsOf(query.expr, query.legendFormat, index, exposition)).toEqual([]);
    },
  );

  it('builds its variables from exported series and labels', () => {
    const refs = variableRefs(dashboard);
    expect(refs.map((ref) => ref.label)).toEqual(['job', 'chain', 'node']);
    for (const { metric, label } of refs) {
      expect(index.has(metric), metric).toBe(true);
      if (!TARGET_LABELS.has(label)) expect(index.get(metric)!.has(label), label).toBe(true);
    }
  });

  it('filters every node panel by the chain variable through rpc_node_info', () => {
    const join =
      ' * on(node) group_left(chain) group by (node, chain) (rpc_node_info{job="$job", chain=~"$chain"})';
    const nodeQueries = dashboardQueries(dashboard).filter((q) => q.expr.includes('"$node"'));
    expect(nodeQueries.length).toBeGreaterThan(15);
    for (const query of nodeQueries) expect(query.expr, query.panel).toContain(join);
    const variables = dashboard.templating.list;
    expect(variables.find((v) => v.name === 'node')?.query).toMatchObject({
      query: 'label_values(rpc_node_info{job="$job", chain=~"$chain"}, node)',
    });
  });
});

describe('the dashboard on a proxy serving two chains with a shared account', () => {
  let chains: MultiChain;
  let chained: Exposition;
  let chainedIndex: SeriesIndex;

  beforeAll(async () => {
    chains = await startMultiChain(
      [
        {
          name: 'sol',
          nodes: [
            { name: 'sol-prem', toml: 'tier = 0\naccount = "shared"' },
            { name: 'sol-backup', toml: 'tier = 1\nmonthly_limit = 0' },
          ],
        },
        { name: 'evm', nodes: [{ name: 'evm-prem', toml: 'tier = 0\naccount = "shared"' }] },
      ],
      { top: '[[accounts]]\nname = "shared"\nmonthly_limit = 5000' },
    );
    await driveTraffic(`${chains.url}/sol`, 10);
    await driveTraffic(`${chains.url}/evm`, 5);
    showBothHeads(chains.cascade.server, 'sol', 'sol-prem', 'sol-backup');
    chained = parseExposition(await (await fetch(`${chains.url}/metrics`)).text());
    chainedIndex = indexOf(chained);
  });
  afterAll(async () => {
    await chains.close();
  });

  it.each(['.*', 'sol', 'evm', 'sol|evm'])(
    'refers only to exported series, labels and values with $chain = %s',
    (chain) => {
      const problems = dashboardQueries(dashboard).flatMap((query) =>
        problemsOf(
          substitute(query.expr, { rateInterval: '1m', job: 'cascade', chain }),
          query.legendFormat,
          chainedIndex,
          chained,
        ).map((problem) => `${query.panel} / ${query.refId}: ${problem}`),
      );
      expect(problems).toEqual([]);
    },
  );

  it('names every chain in rpc_node_info, the chain variable values', () => {
    expect([...chainedIndex.get('rpc_node_info')!.get('chain')!].sort()).toEqual(['evm', 'sol']);
    expect([...chainedIndex.get('rpc_chain_requests_total')!.get('chain')!].sort()).toEqual([
      'evm',
      'sol',
    ]);
    expect([...chainedIndex.get('rpc_account_credits_used')!.get('account')!]).toEqual(['shared']);
  });
});

describe('the dashboard query checker', () => {
  it.each([
    [
      'an attempt outcome that no longer exists',
      'sum by (node) (rate(rpc_upstream_attempts_total{outcome="rate_limit"}[1m]))',
      'no series has outcome="rate_limit"',
    ],
    [
      'a metric without its unit suffix',
      'rpc_node_latency_ema',
      'unknown series rpc_node_latency_ema',
    ],
    [
      'a summary quantile on a histogram',
      'rpc_request_duration_seconds{quantile="0.5"}',
      'unknown series rpc_request_duration_seconds',
    ],
    ['_bucket of a counter', 'rate(rpc_requests_total_bucket[1m])', 'unknown series'],
    ['a label the series lacks', 'rpc_healthy_nodes{node="x"}', 'has no label node'],
    ['grouping by a missing label', 'sum by (tier) (rpc_requests_total)', 'label tier'],
    ['a legend label no series has', 'rpc_sleep_queue_size', 'label node'],
    [
      'a regex alternative that does not exist',
      'rpc_requests_total{outcome=~"forwarded|eror"}',
      '"eror"',
    ],
  ])('rejects %s', (_name, expr, problem) => {
    const legend = expr === 'rpc_sleep_queue_size' ? '{{node}}' : undefined;
    expect(problemsOf(expr, legend, index, exposition).join('\n')).toContain(problem);
  });

  it('rejects an unknown function', () => {
    expect(() => promqlRefs('histogram_quantil(0.5, rpc_batch_size_bucket)')).toThrow(
      'unknown function histogram_quantil()',
    );
  });
});
