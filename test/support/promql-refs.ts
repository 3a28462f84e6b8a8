/**
 * The metric names, label matchers, grouping labels and functions a PromQL expression refers
 * to: enough of PromQL to check the dashboard against what /metrics exports.
 */

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
