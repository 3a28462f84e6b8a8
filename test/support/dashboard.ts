/**
 * The shipped Grafana dashboard as tests see it: every PromQL expression with its panel, the
 * Grafana variables substituted, and the metric and label names each expression refers to.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ProxyServer } from '../../src/core/http/server.js';
import { nextReset } from '../../src/core/quota/billing-period.js';
import { REPO_ROOT } from './cli-process.js';

/** monitoring/ in the repository. */
export const MONITORING_DIR = path.join(REPO_ROOT, 'monitoring');
/** The provisioned dashboard file. */
export const DASHBOARD_PATH = path.join(MONITORING_DIR, 'grafana/dashboards/cascade.json');

interface Target {
  readonly refId?: string;
  readonly expr?: string;
  readonly legendFormat?: string;
}

interface Panel {
  readonly id?: number;
  readonly type: string;
  readonly title: string;
  readonly datasource?: { readonly type?: string; readonly uid?: string };
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}

/** The parts of a dashboard model the tests read. */
export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: readonly Panel[];
  readonly templating: {
    readonly list: ReadonlyArray<{
      readonly name: string;
      readonly type: string;
      readonly query?: string | { readonly query?: string };
    }>;
  };
}

/** One query of one panel. */
export interface DashboardQuery {
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat: string | undefined;
}

/** Reads monitoring/grafana/dashboards/cascade.json. */
export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
}

/** Every panel, rows' nested panels included. */
export function allPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Every target expression of every panel. */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  return allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => {
      if (!target.expr) throw new Error(`panel "${panel.title}" has a target without expr`);
      return {
        panel: panel.title,
        refId: target.refId ?? '?',
        expr: target.expr,
        legendFormat: target.legendFormat,
      };
    }),
  );
}

/** Values for Grafana's built-in and the dashboard's own variables. */
export interface Substitutions {
  readonly rateInterval: string;
  readonly job: string;
}

/** Replaces `$__rate_interval`, `$__interval`, `$__range`, `$job` and `$node` with values. */
export function substitute(expr: string, values: Substitutions): string {
  return expr
    .replaceAll('$__rate_interval', values.rateInterval)
    .replaceAll('$__interval', values.rateInterval)
    .replaceAll('$__range', values.rateInterval)
    .replaceAll('$job', values.job)
    .replaceAll('$node', '.*')
    .replace(/\$\{?\w+\}?/, (variable) => {
      throw new Error(`unknown dashboard variable ${variable} in ${expr}`);
    });
}

/** A label matcher inside `{…}`. */
export interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** What an expression refers to. */
export interface PromqlRefs {
  /** Series selectors: the metric name (as written) and its matchers. */
  readonly selectors: Array<{ readonly metric: string; readonly matchers: Matcher[] }>;
  /** Labels named in by / without / on / ignoring / group_left / group_right lists. */
  readonly grouping: string[];
  /** Functions and aggregations called. */
  readonly functions: string[];
}

/** PromQL functions and aggregation operators the dashboard may use. */
export const PROMQL_FUNCTIONS = new Set([
  'abs',
  'absent',
  'avg',
  'avg_over_time',
  'bottomk',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'count',
  'count_over_time',
  'count_values',
  'delta',
  'deriv',
  'floor',
  'group',
  'histogram_quantile',
  'idelta',
  'increase',
  'irate',
  'label_join',
  'label_replace',
  'last_over_time',
  'max',
  'max_over_time',
  'min',
  'min_over_time',
  'predict_linear',
  'quantile',
  'rate',
  'resets',
  'round',
  'scalar',
  'sort',
  'sort_desc',
  'stddev',
  'stdvar',
  'sum',
  'sum_over_time',
  'time',
  'timestamp',
  'topk',
  'vector',
]);
/** Aggregation operators: the only names a `by (…)` / `without (…)` clause may follow. */
const AGGREGATIONS = new Set([
  'avg',
  'bottomk',
  'count',
  'count_values',
  'group',
  'max',
  'min',
  'quantile',
  'stddev',
  'stdvar',
  'sum',
  'topk',
]);
const GROUPING_KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const OTHER_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);
const IDENT = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const MATCHER = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?\s*/y;

/** Index after the string literal that starts at `i`. */
function skipString(expr: string, i: number): number {
  const quote = expr[i]!;
  let j = i + 1;
  while (j < expr.length && expr[j] !== quote) j += expr[j] === '\\' ? 2 : 1;
  if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
  return j + 1;
}

function skipSpace(expr: string, i: number): number {
  while (i < expr.length && /\s/.test(expr[i]!)) i++;
  return i;
}

/** Parses `{a="x", b=~"y"}` starting at `{`; returns the matchers and the index after `}`. */
function readMatchers(expr: string, i: number): { matchers: Matcher[]; end: number } {
  const matchers: Matcher[] = [];
  let j = i + 1;
  for (;;) {
    j = skipSpace(expr, j);
    if (expr[j] === '}') return { matchers, end: j + 1 };
    MATCHER.lastIndex = j;
    const match = MATCHER.exec(expr);
    if (!match) throw new Error(`cannot read the label matchers at "${expr.slice(i)}"`);
    matchers.push({ label: match[1]!, op: match[2] as Matcher['op'], value: match[3]! });
    j = MATCHER.lastIndex;
  }
}

/** Parses `(a, b)` starting at `(`; returns the labels and the index after `)`. */
function readLabelList(expr: string, i: number): { labels: string[]; end: number } {
  const close = expr.indexOf(')', i);
  if (close === -1) throw new Error(`unclosed label list in ${expr}`);
  const labels = expr
    .slice(i + 1, close)
    .split(',')
    .map((label) => label.trim())
    .filter((label) => label !== '');
  return { labels, end: close + 1 };
}

function readIdentifier(expr: string, i: number, refs: PromqlRefs): number {
  IDENT.lastIndex = i;
  const name = IDENT.exec(expr)![0];
  const after = skipSpace(expr, IDENT.lastIndex);
  const lower = name.toLowerCase();
  if (GROUPING_KEYWORDS.has(lower)) {
    if (expr[after] !== '(') return after;
    const { labels, end } = readLabelList(expr, after);
    refs.grouping.push(...labels);
    return end;
  }
  if (OTHER_KEYWORDS.has(lower)) return IDENT.lastIndex;
  const grouped = AGGREGATIONS.has(name) && /^(by|without)\b/i.test(expr.slice(after));
  if (expr[after] === '(' || grouped) {
    if (!PROMQL_FUNCTIONS.has(name)) throw new Error(`unknown function ${name}() in ${expr}`);
    refs.functions.push(name);
    return after;
  }
  if (expr[after] === '{') {
    const { matchers, end } = readMatchers(expr, after);
    refs.selectors.push({ metric: name, matchers });
    return end;
  }
  refs.selectors.push({ metric: name, matchers: [] });
  return IDENT.lastIndex;
}

/**
 * The metric names, label matchers and grouping labels of a PromQL expression (Grafana
 * variables already substituted). Durations in `[…]`, numbers and strings are skipped.
 */
export function promqlRefs(expr: string): PromqlRefs {
  const refs: PromqlRefs = { selectors: [], grouping: [], functions: [] };
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '"' || c === "'") i = skipString(expr, i);
    else if (c === '[') {
      const close = expr.indexOf(']', i);
      if (close === -1) throw new Error(`unclosed [ in ${expr}`);
      i = close + 1;
    } else if (c === '{') {
      throw new Error(`a selector without a metric name in ${expr}`);
    } else if (/[0-9.]/.test(c)) {
      i += /^[0-9.]+(?:e[+-]?[0-9]+)?[smhdwy]?/i.exec(expr.slice(i))![0].length;
    } else if (/[a-zA-Z_:]/.test(c)) {
      i = readIdentifier(expr, i, refs);
    } else {
      i++;
    }
  }
  return refs;
}

/** The labels a `{{label}}` legend format uses. */
export function legendLabels(legend: string | undefined): string[] {
  return [...(legend ?? '').matchAll(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}/g)].map((m) => m[1]!);
}

/** Metric names of `label_values(metric, label)` variable queries, with the label. */
export function variableRefs(dashboard: Dashboard): Array<{ metric: string; label: string }> {
  return dashboard.templating.list.flatMap((variable) => {
    if (variable.type !== 'query') return [];
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    const match =
      /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s*,\s*(\w+)\s*\)$/.exec(
        query ?? '',
      );
    if (!match) throw new Error(`variable ${variable.name}: unsupported query ${query}`);
    return [{ metric: match[1]!, label: match[2]! }];
  });
}

/** Unix seconds of 00:00 UTC on the next reset day of a node with `resetDay`. */
export function periodEndSeconds(resetDay: number, today = new Date()): number {
  return Date.parse(`${nextReset(today, resetDay)}T00:00:00Z`) / 1000;
}

/**
 * Makes sure the server exports `rpc_node_quota_period_end_timestamp_seconds`. Until
 * ProxyServer passes `periodEnd` in its quota source, installs the source it should register
 * (the same fields, plus each node's next reset), so the "Days left" panel has data to check.
 */
export async function ensurePeriodEnd(server: ProxyServer): Promise<void> {
  if ((await server.metrics.render()).includes('\nrpc_node_quota_period_end_timestamp_seconds{'))
    return;
  server.metrics.setQuotaSource(() =>
    server.topology.table.all.map((node) => ({
      name: node.name,
      used: node.usage.used,
      threshold: node.config.spilloverThreshold,
      periodEnd: periodEndSeconds(node.config.resetDay),
    })),
  );
}

/** Sends `count` rounds of traffic: calls of two methods, batches and unparsable bodies. */
export async function driveTraffic(url: string, count: number): Promise<void> {
  const post = async (body: string): Promise<void> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await response.arrayBuffer();
  };
  for (let i = 0; i < count; i++) {
    await post(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'getSlot' }));
    await post(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'getBalance', params: ['x'] }));
    if (i % 5 === 0) await post('not json');
    if (i % 2 === 0) {
      const batch = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getSlot' }));
      await post(JSON.stringify(batch.slice(0, 1 + (i % 3))));
    }
  }
}
