/**
 * The shipped Grafana dashboard as tests see it: every PromQL expression with its panel, the
 * Grafana variables substituted, the labels its legends and variables use. promql-refs.ts reads
 * the metric and label names out of an expression.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
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
  /** The `$chain` variable's value (a regex); default `.*` (All). */
  readonly chain?: string;
}

/** Replaces `$__rate_interval`, `$__interval`, `$__range`, `$job`, `$chain` and `$node` with values. */
export function substitute(expr: string, values: Substitutions): string {
  return expr
    .replaceAll('$__rate_interval', values.rateInterval)
    .replaceAll('$__interval', values.rateInterval)
    .replaceAll('$__range', values.rateInterval)
    .replaceAll('$job', values.job)
    .replaceAll('$chain', values.chain ?? '.*')
    .replaceAll('$node', '.*')
    .replace(/\$\{?\w+\}?/, (variable) => {
      throw new Error(`unknown dashboard variable ${variable} in ${expr}`);
    });
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
