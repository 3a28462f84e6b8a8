/** The tables `cascade bench` prints (cli-table3), one per mode. */
import { NODE_HEAD, loadNodeRows, loadSummaryRows } from '../bench/load-files.js';
import type { LoadReport } from '../bench/load-report.js';
import { machineLine } from '../bench/machine.js';
import { OVERHEAD_HEAD, overheadRows, type OverheadReport } from '../bench/overhead.js';
import type { TlsMode, TlsReport } from '../bench/tls-amortization.js';
import { renderTable } from './output.js';

/** `888 ms`, `29.6 ms`, `0.31 ms`. */
export function formatMs(value: number): string {
  if (value >= 100) return `${value.toFixed(0)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

function speedup(ratio: number): string {
  if (ratio <= 0) return '—';
  return ratio >= 1 ? `${ratio.toFixed(1)}× faster` : `${ratio.toFixed(2)}× (slower)`;
}

const COLUMN: Record<TlsMode, string> = { direct: 'Direct (naive client)', proxy: 'Via cascade' };

/** The seed's table: p50, average, p99, setup per request, success rate, speed-up. */
export function renderTlsTable(report: TlsReport, files: readonly string[]): string {
  const modes = (['direct', 'proxy'] as const).filter((mode) => report.modes[mode]);
  const get = (mode: TlsMode) => report.modes[mode]!;
  const c = report.comparison;
  const row = (label: string, pick: (mode: TlsMode) => string, ratio?: number) => [
    label,
    ...modes.map(pick),
    ...(c ? [ratio === undefined ? '—' : speedup(ratio)] : []),
  ];
  const rows = [
    row('p50 latency', (m) => formatMs(get(m).latencyMs.p50), c?.p50.speedup),
    row('average', (m) => formatMs(get(m).latencyMs.mean), c?.mean.speedup),
    row('p99 latency', (m) => formatMs(get(m).latencyMs.p99), c?.p99.speedup),
    row('connection setup / request', (m) => formatMs(get(m).setupMs.mean)),
    row(
      'success rate',
      (m) => `${(get(m).successRate * 100).toFixed(1)}% (${get(m).succeeded}/${get(m).requests})`,
    ),
  ];
  if (c) rows[4]![rows[4]!.length - 1] = '';
  const head = [
    `${report.parameters.method}, same provider`,
    ...modes.map((m) => COLUMN[m]),
    ...(c ? [''] : []),
  ];
  const p = report.parameters;
  const qps = p.qps === null ? 'unthrottled' : `throttled to ${p.qps} QPS`;
  const rtt = p.rttMs === null ? '' : ` (simulated RTT ${p.rttMs} ms)`;
  return [
    renderTable(head, rows),
    `Run: ${p.requests} requests per path, concurrency ${p.concurrency}, ${qps}, new connection per request, against ${p.target}${rtt}; proxy: ${p.proxy}.`,
    `Machine: ${machineLine(report.machine)}.`,
    ...(files.length ? [`Wrote ${files.join(', ')}`] : []),
    '',
  ].join('\n');
}

/** The Run 1 / Run 2 tables. */
export function renderLoadTables(report: LoadReport, files: readonly string[]): string {
  return [
    `${report.scenario}: ${report.description}`,
    renderTable(['Metric', 'Value'], loadSummaryRows(report)),
    renderTable([...NODE_HEAD], loadNodeRows(report)),
    `Machine: ${machineLine(report.machine)}.`,
    ...(files.length ? [`Wrote ${files.join(', ')}`] : []),
    '',
  ].join('\n');
}

/** Direct vs through cascade, and the difference. */
export function renderOverheadTable(report: OverheadReport, files: readonly string[]): string {
  return [
    renderTable([...OVERHEAD_HEAD], overheadRows(report)),
    `Rate ${report.parameters.rate} req/s, ${report.parameters.connections} keep-alive connections, ${report.parameters.durationS} s per path. Machine: ${machineLine(report.machine)}.`,
    ...(files.length ? [`Wrote ${files.join(', ')}`] : []),
    '',
  ].join('\n');
}
