/** The TLS-amortization result files: per-mode oha-style text, the JSON and the SVG chart. */
import { machineLine } from './machine.js';
import type { NaiveRun } from './naive-client.js';
import { ohaText } from './oha-text.js';
import { percentileAxis, percentileX } from './percentile-axis.js';
import { resultJson } from './result-files.js';
import {
  PALETTE,
  PANELS_TOP,
  axisTop,
  lineChartPanel,
  niceTicks,
  stackedBarPanel,
  svgDocument,
} from './svg-chart.js';
import type { TlsMode, TlsModeSummary, TlsReport } from './tls-amortization.js';

const LABEL: Record<TlsMode, string> = {
  direct: 'Direct (naive client)',
  proxy: 'Via cascade',
};
const COLOR: Record<TlsMode, string> = { direct: PALETTE[0], proxy: PALETTE[1] };

/** The chart: both percentile curves, and where the mean request's time goes. */
export function tlsChartSvg(report: TlsReport): string {
  const modes = (['direct', 'proxy'] as const).flatMap((mode) => {
    const summary = report.modes[mode];
    return summary ? [summary] : [];
  });
  const top = Math.max(0, ...modes.map((m) => m.latencyMs.max));
  const yTicks = niceTicks(top * 1.2, 6, ' ms');
  const curves = lineChartPanel(
    {
      title: 'Latency by percentile (new connection per request)',
      x: percentileAxis(),
      y: { label: 'latency (ms)', min: 0, max: axisTop(yTicks), ticks: yTicks },
      series: modes.map((m) => ({
        name: `${LABEL[m.mode]}: p50 ${m.latencyMs.p50.toFixed(1)} ms, p99 ${m.latencyMs.p99.toFixed(1)} ms`,
        color: COLOR[m.mode],
        points: m.curve.map((p) => ({ x: percentileX(p.percentile), y: p.ms })),
      })),
    },
    { x: 0, y: PANELS_TOP, width: 620, height: 380 },
  );
  const split = stackedBarPanel(
    {
      title: 'Mean request: connection setup + the rest',
      yLabel: 'mean latency (ms)',
      bars: modes.map((m) => ({
        label: LABEL[m.mode],
        segments: [
          { name: 'setup', value: m.setupMs.mean, color: '#7570b3' },
          {
            name: 'request',
            value: Math.max(0, m.latencyMs.mean - m.setupMs.mean),
            color: COLOR[m.mode],
          },
        ],
      })),
    },
    { x: 620, y: PANELS_TOP, width: 380, height: 380 },
  );
  const p = report.parameters;
  const subtitle = `${p.requests} requests/path, concurrency ${p.concurrency}${p.qps ? `, ${p.qps} QPS` : ''}, ${p.method}, target ${p.target}${p.rttMs !== null ? ` (simulated RTT ${p.rttMs} ms)` : ''} — ${machineLine(report.machine)} — ${report.startedAt.slice(0, 10)}`;
  return svgDocument(1000, 450, 'cascade bench: TLS amortization', subtitle, [curves, split]);
}

/** Every file of a TLS run: `<mode>.txt` per mode run; the JSON and SVG when both ran. */
export function tlsResultFiles(
  report: TlsReport,
  runs: Partial<Record<TlsMode, NaiveRun>>,
): Record<string, string> {
  const files: Record<string, string> = {};
  for (const mode of ['direct', 'proxy'] as const) {
    const summary: TlsModeSummary | undefined = report.modes[mode];
    const run = runs[mode];
    if (summary && run)
      files[`${mode}.txt`] = ohaText(summary, run, `cascade bench ${mode}: ${LABEL[mode]}`);
  }
  if (report.comparison) {
    files['tls-amortization.json'] = resultJson(report);
    files['tls-amortization.svg'] = tlsChartSvg(report);
  }
  return files;
}
