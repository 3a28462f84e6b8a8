/**
 * Markdown tables of the hot-path benchmark: the targets with met / not met, and every
 * scenario per target as "median (min–max over windows)".
 */
import {
  TARGET_NAMES,
  type Added,
  type Derived,
  type Results,
  type Scenario,
  type Spread,
  type TargetCheck,
  type TargetName,
  type TargetResults,
} from './hotpath-results.js';

const known = (value: number | undefined): value is number =>
  value !== undefined && !Number.isNaN(value);
const us = (value: number | undefined): string => (known(value) ? `${Math.round(value)} µs` : '—');
const signedUs = (value: number | undefined): string =>
  known(value) ? `${value < 0 ? '−' : '+'}${us(Math.abs(value))}` : '—';
const ms = (value: number | undefined): string =>
  known(value) ? `${(value / 1000).toFixed(2)} ms` : '—';
const mb = (bytes: number | undefined): string =>
  known(bytes) ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : '—';
const times = (value: number | undefined): string => (known(value) ? `${value.toFixed(2)}×` : '—');
const pct = (value: number | undefined): string =>
  known(value) ? `${Math.round(value * 100)}%` : '—';
const count = (value: number): string => Math.round(value).toLocaleString('en-US');

/** "median (min–max)" in one unit. */
function ranged(s: Spread | undefined, unit: (v: number) => string): string {
  if (!s) return '—';
  return s.min === s.max ? unit(s.median) : `${unit(s.median)} (${unit(s.min)}–${unit(s.max)})`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function measuredText(check: TargetCheck, results: Results, derived: Derived): string {
  const nginx = derived.addedFixedRate.nginx;
  const cascade = derived.addedFixedRate.cascade;
  switch (check.name) {
    case 'cpu_per_request_cascade_to_reference':
      return (
        `${times(check.value)} (median of per-round ratios; medians ` +
        `${us(results.cascade?.throughput?.cpuUsPerRequest?.median)} vs ` +
        `${us(results.reference?.throughput?.cpuUsPerRequest?.median)} per request)`
      );
    case 'cpu_per_request_keyed_to_reference':
      return (
        `${times(check.value)} (keyed ${us(results.keyed?.throughput?.cpuUsPerRequest?.median)} ` +
        `per request; keyed / plain cascade ${times(derived.cpuRatioKeyedToCascade)})`
      );
    case 'added_p50_one_connection_us':
      return `${signedUs(check.value)} (p99 ${signedUs(derived.addedOneConnection.cascade?.p99Us)})`;
    case 'added_p50_at_rate_cascade_to_nginx':
      return `${times(check.value)} (cascade ${signedUs(cascade?.p50Us)}, nginx ${signedUs(nginx?.p50Us)})`;
    case 'added_p99_at_rate_cascade_to_nginx':
      return `${times(check.value)} (cascade ${signedUs(cascade?.p99Us)}, nginx ${signedUs(nginx?.p99Us)})`;
    case 'p99_200_connections_5ms_us':
      return ms(check.value);
    default:
      return (
        `${times(check.value)} (${mb(results.cascade?.crowd?.peakRssBytes)} vs ` +
        `${mb(results.reference?.crowd?.peakRssBytes)})`
      );
  }
}

const TARGET_TEXT: Record<string, [string, string]> = {
  cpu_per_request_cascade_to_reference: ['(a) CPU per request, cascade / reference', '≤ 1.1×'],
  cpu_per_request_keyed_to_reference: [
    '(a) CPU per request, cascade with a client key / reference',
    '≤ 1.1×',
  ],
  added_p50_one_connection_us: ['(b) added latency over direct, 1 connection, p50', '≤ 150 µs'],
  added_p50_at_rate_cascade_to_nginx: [
    '(c) added p50 at the fixed rate, cascade / nginx',
    '≤ 1.5×',
  ],
  added_p99_at_rate_cascade_to_nginx: [
    '(c) added p99 at the fixed rate, cascade / nginx',
    '≤ 1.5×',
  ],
  p99_200_connections_5ms_us: ['(d) cascade p99, 200 connections, 5 ms upstream', '≤ 40 ms'],
  peak_rss_200_connections_cascade_to_reference: ['(d) peak RSS, cascade / reference', '≤ 1.2×'],
};

/** The targets table. */
export function targetsTable(checks: readonly TargetCheck[], results: Results, derived: Derived) {
  const verdict = (met: boolean | undefined) =>
    met === undefined ? 'n/a' : met ? 'met' : '**not met**';
  return table(
    ['target', 'measured (medians)', 'limit', 'verdict'],
    checks.map((c) => {
      const [name, limit] = TARGET_TEXT[c.name] ?? [c.name, String(c.limit)];
      return [name, measuredText(c, results, derived), limit, verdict(c.met)];
    }),
  );
}

/** The per-target table of every scenario. */
export function resultsTable(results: Results, derived: Derived, rate: number): string {
  const names = TARGET_NAMES.filter((name) => results[name] !== undefined);
  const column = (cell: (r: TargetResults, name: TargetName) => string): string[] =>
    names.map((name) => cell(results[name]!, name));
  const addedCell = (a: Added | undefined): string =>
    a === undefined ? '—' : `${signedUs(a.p50Us)} / ${signedUs(a.p99Us)}`;
  const latency = (s: Scenario | undefined, unit: (v: number) => string): string =>
    s ? `${ranged(s.p50Us, unit)} / ${ranged(s.p99Us, unit)}` : '—';
  const rps = (s: Scenario | undefined): string => ranged(s?.rps, count);
  const noise = (r: TargetResults): string =>
    [r.throughput, r.oneConnection, r.fixedRate, r.crowd]
      .map((s) => `${pct(s?.noise?.median)} (${pct(s?.noise?.max)})`)
      .join(' / ');
  const errors = (r: TargetResults): string =>
    String(
      [r.throughput, r.oneConnection, r.fixedRate, r.crowd].reduce(
        (t, s) => t + (s?.errors ?? 0),
        0,
      ),
    );
  const rows: [string, ...string[]][] = [
    ['(a) req/s, 50 connections, delay 0', ...column((r) => rps(r.throughput))],
    ['(a) p50 / p99', ...column((r) => latency(r.throughput, ms))],
    ['(a) proxy CPU per request', ...column((r) => ranged(r.throughput?.cpuUsPerRequest, us))],
    ['(a) proxy CPU busy (of one core)', ...column((r) => ranged(r.throughput?.cpuShare, pct))],
    ['(a) mock process CPU busy', ...column((r) => ranged(r.throughput?.mocksCpuShare, pct))],
    ['(a) peak RSS', ...column((r) => mb(r.throughput?.peakRssBytes))],
    ['(b) p50 / p99, 1 connection', ...column((r) => latency(r.oneConnection, us))],
    [
      '(b) added over direct, p50 / p99',
      ...column((_r, name) => addedCell(derived.addedOneConnection[name])),
    ],
    [`(c) achieved req/s (asked ${rate})`, ...column((r) => rps(r.fixedRate))],
    [`(c) p50 / p99 at ${rate} req/s`, ...column((r) => latency(r.fixedRate, us))],
    [
      '(c) added over direct, p50 / p99',
      ...column((_r, name) => addedCell(derived.addedFixedRate[name])),
    ],
    [
      `(c) proxy CPU per request at ${rate} req/s`,
      ...column((r) => ranged(r.fixedRate?.cpuUsPerRequest, us)),
    ],
    ['(d) req/s, 200 connections, delay 5 ms', ...column((r) => rps(r.crowd))],
    ['(d) p50 / p99', ...column((r) => latency(r.crowd, ms))],
    ['(d) peak RSS', ...column((r) => mb(r.crowd?.peakRssBytes))],
    ['errors (non-2xx, socket), all scenarios', ...column(errors)],
    ['noise: proxy CPU used by others, median (max), a / b / c / d', ...column(noise)],
  ];
  return table(['', ...names], rows);
}
