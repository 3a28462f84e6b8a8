/** The load-run result files: results/<scenario>.json, .md (the tables) and .svg. */
import type { LoadReport } from './load-report.js';
import { machineLine } from './machine.js';
import { percentileAxis, percentileX } from './percentile-axis.js';
import { markdownTable, resultJson } from './result-files.js';
import {
  PALETTE,
  PANELS_TOP,
  axisTop,
  lineChartPanel,
  niceTicks,
  stackedBarPanel,
  svgDocument,
} from './svg-chart.js';

/** `12,345`. */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** `2.55 ms`. */
export function ms(value: number): string {
  return `${value.toFixed(value >= 100 ? 0 : 2)} ms`;
}

function parametersLine(r: LoadReport): string {
  const p = r.parameters;
  const auto =
    p.limitsScaleMode === 'auto'
      ? ` (auto: fitted to the ${count(p.calibrationRps ?? 0)} req/s the proxy sustained without limits after the warm-up)`
      : '';
  const limits =
    p.limitsScale === null
      ? 'limits of the external proxy'
      : `rps_limit of ${p.baseConfig} × ${p.limitsScale}${auto}`;
  return `autocannon, ${p.connections} connections, ${p.warmupS} s warm-up, then one run whose first ${p.leadInS} s are not counted and the next ${p.durationS} s are; proxy: ${p.proxy}; ${limits}`;
}

/** The headline table rows: metric, value. */
export function loadSummaryRows(r: LoadReport): string[][] {
  const t = r.throughput;
  const rows = [
    ['Peak throughput (best 1 s sample)', `${count(t.peakRps)} RPS`],
    ['Steady state (median 1 s sample)', `${count(t.steadyRps)} RPS`],
    ['Average over the run', `${count(t.averageRps)} RPS (${count(t.ok)} ok in ${t.elapsedS} s)`],
    ['End-to-end latency p50', ms(r.latencyMs.p50)],
    ['End-to-end latency p95', ms(r.latencyMs.p95)],
    ['End-to-end latency p99', ms(r.latencyMs.p99)],
    [
      'Non-2xx / errors / timeouts',
      `${count(t.non2xx)} / ${count(t.errors)} / ${count(t.timeouts)}`,
    ],
  ];
  if (r.proxyProcess) {
    rows.push(
      ['Proxy CPU per request', `${count(r.proxyProcess.cpuMicrosPerRequest)} µs`],
      ['Proxy CPU use', `${r.proxyProcess.cpuCores.toFixed(2)} cores`],
      ['Proxy peak RSS (VmHWM)', `${r.proxyProcess.peakRssMiB.toFixed(1)} MiB`],
    );
  }
  const others = r.otherCpuCores;
  const parts = [
    ...(others.mocks === null ? [] : [`mocks ${others.mocks.toFixed(2)}`]),
    `load generator ${others.loadGenerator.toFixed(2)}`,
    ...(others.restOfMachine === null
      ? []
      : [`rest of the machine ${others.restOfMachine.toFixed(2)}`]),
  ];
  rows.push(['CPU of everything else (cores)', parts.join(', ')]);
  return rows;
}

/** Per-node rows: tier, node, rps_limit, delay, req/s, rate-limit rejections/s. */
export function loadNodeRows(r: LoadReport): string[][] {
  return [...r.nodes]
    .sort((a, b) => a.tier - b.tier || b.successPerS - a.successPerS)
    .map((n) => [
      String(n.tier),
      n.name,
      n.rpsLimit === null ? '—' : count(n.rpsLimit),
      n.delayMs === null ? '—' : `${n.delayMs} ms`,
      count(n.successPerS),
      count(n.rateLimitSkipsPerS),
    ]);
}

/** Column names of loadNodeRows. */
export const NODE_HEAD = [
  'Tier',
  'Node',
  'rps_limit',
  'Delay',
  'req/s',
  'Rate-limit rejections/s',
] as const;

/** results/<scenario>.md */
export function loadMarkdown(r: LoadReport): string {
  const tierRows = r.tiers.map((t) => [
    String(t.tier),
    count(t.successPerS),
    t.rpsLimit === null ? '—' : count(t.rpsLimit),
  ]);
  return [
    `# cascade bench load — ${r.scenario}: ${r.description}`,
    '',
    `- Machine: ${machineLine(r.machine)}`,
    `- Date: ${r.startedAt}`,
    `- Load: ${parametersLine(r)}`,
    '',
    markdownTable(['Metric', 'Value'], loadSummaryRows(r), ['left', 'right']),
    '',
    '## Traffic distribution by tier (successful req/s per node)',
    '',
    markdownTable([...NODE_HEAD], loadNodeRows(r), [
      'right',
      'left',
      'right',
      'right',
      'right',
      'right',
    ]),
    '',
    markdownTable(['Tier', 'req/s', 'Sum of rps_limit'], tierRows, ['right', 'right', 'right']),
    '',
    `Rate-limit rejections are \`rpc_upstream_skips_total{reason="rate_limit"}\`: requests the proxy bounced off a node's empty token bucket without touching the network (a request that waits for a token and walks the table again counts once per round). Per-node req/s sum to ${count(r.upstreamSuccessPerS)} upstream successes/s against ${count(r.throughput.averageRps)} client 2xx/s. A node's bucket holds one second of its limit, so a node that was not saturated when the window opened can exceed its rps_limit by up to that burst spread over the ${r.parameters.durationS} s window.`,
    '',
  ].join('\n');
}

/** results/<scenario>.svg: latency percentiles, per-node throughput stacked by tier, req/s over time. */
export function loadSvg(r: LoadReport): string {
  const yTicks = niceTicks(r.latencyMs.max * 1.2, 6, ' ms');
  const latency = lineChartPanel(
    {
      title: 'End-to-end latency by percentile',
      x: percentileAxis(),
      y: { label: 'latency (ms)', min: 0, max: axisTop(yTicks), ticks: yTicks },
      series: [
        {
          name: `p50 ${ms(r.latencyMs.p50)}, p95 ${ms(r.latencyMs.p95)}, p99 ${ms(r.latencyMs.p99)}`,
          color: PALETTE[2],
          points: r.curve.map((p) => ({ x: percentileX(p.percentile), y: p.ms })),
        },
      ],
    },
    { x: 0, y: PANELS_TOP, width: 480, height: 360 },
  );
  const colors = new Map(r.nodes.map((n, i) => [n.name, PALETTE[i % PALETTE.length]!]));
  const tiers = stackedBarPanel(
    {
      title: 'Successful req/s per node, stacked by tier',
      yLabel: 'req/s',
      bars: r.tiers.map((t) => ({
        label: `Tier ${t.tier}${t.rpsLimit === null ? '' : ` (cap ${count(t.rpsLimit)})`}`,
        segments: r.nodes
          .filter((n) => n.tier === t.tier)
          .map((n) => ({ name: n.name, value: n.successPerS, color: colors.get(n.name)! })),
      })),
    },
    { x: 480, y: PANELS_TOP, width: 480, height: 360 },
  );
  const rpsTicks = niceTicks(Math.max(1, ...r.throughput.perSecond) * 1.2, 5);
  const secondTicks = niceTicks(Math.max(1, r.throughput.perSecond.length), 5, ' s');
  const overTime = lineChartPanel(
    {
      title: 'Client 2xx responses per second',
      x: { label: 'second of the run', min: 0, max: axisTop(secondTicks), ticks: secondTicks },
      y: { label: 'req/s', min: 0, max: axisTop(rpsTicks), ticks: rpsTicks },
      series: [
        {
          name: `peak ${count(r.throughput.peakRps)}, steady ${count(r.throughput.steadyRps)} RPS`,
          color: PALETTE[1],
          points: r.throughput.perSecond.map((value, i) => ({ x: i + 1, y: value })),
        },
      ],
    },
    { x: 0, y: PANELS_TOP + 360, width: 960, height: 260 },
  );
  const subtitle = `${parametersLine(r)} — ${machineLine(r.machine)} — ${r.startedAt.slice(0, 10)}`;
  return svgDocument(960, 690, `cascade bench load — ${r.scenario}: ${r.description}`, subtitle, [
    latency,
    tiers,
    overTime,
  ]);
}

/** Every file of a load run. */
export function loadResultFiles(r: LoadReport): Record<string, string> {
  return {
    [`${r.scenario}.json`]: resultJson(r),
    [`${r.scenario}.md`]: loadMarkdown(r),
    [`${r.scenario}.svg`]: loadSvg(r),
  };
}
