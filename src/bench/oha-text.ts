/**
 * Raw per-mode output in the shape of oha's text report (summary, response-time histogram,
 * percentiles, connection details, status codes, errors), for results/direct.txt and
 * results/proxy.txt.
 */
import type { NaiveRun } from './naive-client.js';
import type { TlsModeSummary } from './tls-amortization.js';

const HISTOGRAM_BUCKETS = 11;
const BAR_WIDTH = 40;
const DISTRIBUTION = [10, 25, 50, 75, 90, 95, 99, 99.9, 99.99] as const;

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(4)} secs`;
}

function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(2)} KiB`;
  return `${bytes} B`;
}

function histogramLines(latencies: readonly number[]): string[] {
  if (latencies.length === 0) return ['  (no responses)'];
  const min = Math.min(...latencies);
  const max = Math.max(...latencies);
  const step = (max - min) / (HISTOGRAM_BUCKETS - 1) || 1;
  const counts = new Array<number>(HISTOGRAM_BUCKETS).fill(0);
  for (const value of latencies) {
    const index = Math.min(HISTOGRAM_BUCKETS - 1, Math.round((value - min) / step));
    counts[index] = (counts[index] ?? 0) + 1;
  }
  const most = Math.max(...counts);
  return counts.map((count, i) => {
    const edge = ((min + i * step) / 1000).toFixed(3);
    const bar = '■'.repeat(Math.round((count / most) * BAR_WIDTH));
    return `  ${edge} [${count}]`.padEnd(22) + ` |${bar}`;
  });
}

function phase(values: readonly number[]): string {
  if (values.length === 0) return `${secs(0)}, ${secs(0)}, ${secs(0)}`;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return `${secs(mean)}, ${secs(Math.min(...values))}, ${secs(Math.max(...values))}`;
}

/** oha-style text for one mode. */
export function ohaText(summary: TlsModeSummary, run: NaiveRun, title: string): string {
  const answered = run.samples.filter((s) => s.error === undefined);
  const latencies = answered.map((s) => s.latencyMs);
  const sorted = [...latencies].sort((a, b) => a - b);
  const lines = [
    `# ${title}`,
    `# target: ${summary.target}`,
    '',
    'Summary:',
    `  Success rate:\t${(summary.successRate * 100).toFixed(2)}%`,
    `  Total:\t${secs(run.elapsedMs)}`,
    `  Slowest:\t${secs(summary.latencyMs.max)}`,
    `  Fastest:\t${secs(summary.latencyMs.min)}`,
    `  Average:\t${secs(summary.latencyMs.mean)}`,
    `  Requests/sec:\t${summary.requestsPerS.toFixed(4)}`,
    '',
    `  Total data:\t${size(summary.bytes)}`,
    `  Size/request:\t${size(answered.length ? Math.round(summary.bytes / answered.length) : 0)}`,
    `  Size/sec:\t${size(run.elapsedMs > 0 ? Math.round((summary.bytes * 1000) / run.elapsedMs) : 0)}`,
    '',
    'Response time histogram:',
    ...histogramLines(latencies),
    '',
    'Response time distribution:',
    ...DISTRIBUTION.map((p) => `  ${p.toFixed(2)}% in ${secs(nearestRank(sorted, p))}`),
    '',
    'Details (average, fastest, slowest):',
    `  Connection setup:\t${phase(run.samples.map((s) => s.setupMs))}`,
    `  DNS-lookup:\t${phase(run.samples.map((s) => s.dnsMs))}`,
    `  TCP connect:\t${phase(run.samples.map((s) => s.tcpMs))}`,
    `  TLS handshake:\t${phase(run.samples.map((s) => s.tlsMs))}`,
    `  Wait (ready → headers):\t${phase(answered.map((s) => s.waitMs))}`,
    '',
    'Status code distribution:',
    ...Object.entries(summary.statusCodes).map(([code, n]) => `  [${code}] ${n} responses`),
    ...(Object.keys(summary.errors).length
      ? [
          '',
          'Error distribution:',
          ...Object.entries(summary.errors).map(([e, n]) => `  [${n}] ${e}`),
        ]
      : []),
  ];
  return `${lines.join('\n')}\n`;
}

/** The nearest-rank percentile of sorted values (exact, for the text report). */
export function nearestRank(sorted: readonly number[], percentile: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((percentile / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}
