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
import { driveTraffic, ensurePeriodEnd } from '../support/dashboard-traffic.js';
import { promqlRefs } from '../support/promql-refs.js';
import { parseExposition, type Exposition } from '../../src/bench/prometheus-text.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';

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
function showBothHeads(h: Harness): void {
  const chain = h.server.topology.chain;
  const premium = h.server.topology.node('premium')!.heads;
  const backup = h.server.topology.node('backup')!.heads;
  for (let slot = 0; slot < premium.values.length; slot++) {
    const value = premium.values[slot]!;
    if (value >= 0) chain.observe(backup, slot, value, Bound.exact, premium.seenAt[slot]!);
  }
}

let harness: Harness;
let exposition: Exposition;
let index: SeriesIndex;

beforeAll(async () => {
  harness = await startHarness([
    { name: 'premium', tier: 0, monthlyLimit: 10_000, rpsLimit: 50 },
    { name: 'backup', tier: 1 },
  ]);
  await ensurePeriodEnd(harness.server);
  await driveTraffic(harness.url, 20);
  showBothHeads(harness);
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
    expect(refs.map((ref) => ref.label)).toEqual(['job', 'node']);
    for (const { metric, label } of refs) {
      expect(index.has(metric), metric).toBe(true);
      if (!TARGET_LABELS.has(label)) expect(index.get(metric)!.has(label), label).toBe(true);
    }
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
