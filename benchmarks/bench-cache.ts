/**
 * What the response cache and in-flight coalescing save: a realistic mix (benchmarks/cache-mix.ts,
 * a Solana dApp and an EVM dApp) is replayed at its own timing through `cascade serve` twice —
 * once with `[cache]` off (coalesce = false: every request reaches a node) and once with the
 * shipped `[cache]` on — in front of mock nodes with 20 ms of latency. Measured: upstream
 * requests (the mocks' own counts) and credits booked (the proxy's rpc_node_quota_used), and
 * the share the cache saved; then the proxy's CPU per request of a hit and of a miss. Every
 * answer is checked for status 200 and the client's own id. Writes results/cache.json and .md.
 * Linux only (/proc for CPU). Run from the repository root:
 *
 *     npm run bench:cache [-- --seconds 4]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readProcess } from '../src/bench/process-stats.js';
import { startMockNodes } from '../src/mock/index.js';
import {
  agent,
  metricSum,
  post,
  replay,
  scrape,
  startProxy,
  stopProxy,
  type Proxy,
} from './cache-bench-proxy.js';
import { evmMix, solanaMix, type MixRequest } from './cache-mix.js';

const REPO_ROOT = path.resolve('.');
const UPSTREAM_DELAY_MS = 20;
/** A block the mock chain finalized long before the run (its head starts at 21,000,000). */
const OLDEST_FINAL = 20_999_900;
const CACHE_ON = '[cache]\n';
const CACHE_OFF = '[cache]\nenabled = false\ncoalesce = false\n';

interface Chain {
  readonly name: string;
  readonly nodes: readonly {
    readonly name: string;
    readonly prices: string;
    readonly tier: number;
  }[];
  readonly mix: (ms: number) => MixRequest[];
}

const CHAINS: readonly Chain[] = [
  {
    name: 'Solana dApp',
    nodes: [
      { name: 'helius', prices: 'helius.toml', tier: 0 },
      { name: 'triton', prices: 'solana.toml', tier: 1 },
    ],
    mix: (ms) => solanaMix(ms),
  },
  {
    name: 'EVM dApp',
    nodes: [
      { name: 'alchemy', prices: 'alchemy-evm.toml', tier: 0 },
      { name: 'public', prices: 'public.toml', tier: 1 },
    ],
    mix: (ms) => evmMix(ms, OLDEST_FINAL),
  },
];

interface RunResult {
  readonly requests: number;
  readonly bad: number;
  readonly upstream: number;
  readonly credits: number;
  readonly hits: number;
  readonly coalesced: number;
  readonly creditsSavedMetric: number;
}

async function run(
  dir: string,
  chain: Chain,
  cache: string,
  mix: readonly MixRequest[],
): Promise<RunResult> {
  const mocks = await startMockNodes(
    chain.nodes.map((n) => ({ name: n.name, port: 0, delayMs: UPSTREAM_DELAY_MS })),
  );
  const proxy = await startProxy(dir, chain, mocks, cache);
  try {
    const { sent, bad } = await replay(proxy.url, mix);
    const text = await scrape(proxy.url);
    return {
      requests: sent,
      bad,
      upstream: mocks.reduce((sum, m) => sum + m.stats().requests, 0),
      credits: metricSum(text, 'rpc_node_quota_used'),
      hits: metricSum(text, 'rpc_cache_requests_total', 'result="hit"'),
      coalesced: metricSum(text, 'rpc_cache_requests_total', 'result="coalesced"'),
      creditsSavedMetric: metricSum(text, 'rpc_credits_saved_total'),
    };
  } finally {
    await stopProxy(proxy);
    await Promise.all(mocks.map((m) => m.close()));
  }
}

/** Proxy CPU (µs) per request for `count` requests built by `body(i)`, 16 at a time. */
async function cpuPerRequest(
  proxy: Proxy,
  count: number,
  body: (i: number) => string,
): Promise<number> {
  const pid = proxy.child.pid!;
  for (let i = 0; i < 200; i++) await post(proxy.url, body(-1 - i));
  const before = readProcess(pid)!.cpuMicros;
  let next = 0;
  const worker = async () => {
    while (next < count) await post(proxy.url, body(next++));
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  await new Promise((resolve) => setTimeout(resolve, 50));
  return (readProcess(pid)!.cpuMicros - before) / count;
}

async function cpuCosts(
  dir: string,
  count: number,
): Promise<{ hit: number; miss: number; noCache: number }> {
  const chain = CHAINS[0]!;
  const mocks = await startMockNodes(chain.nodes.map((n) => ({ name: n.name, port: 0 })));
  const hitBody = (i: number) => `{"jsonrpc":"2.0","id":${i},"method":"getGenesisHash"}`;
  const missBody = (i: number) =>
    `{"jsonrpc":"2.0","id":${i},"method":"getBalance","params":["user${i}aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]}`;
  try {
    let proxy = await startProxy(dir, chain, mocks, CACHE_ON);
    const hit = await cpuPerRequest(proxy, count, hitBody);
    const miss = await cpuPerRequest(proxy, count, missBody);
    await stopProxy(proxy);
    proxy = await startProxy(dir, chain, mocks, CACHE_OFF);
    const noCache = await cpuPerRequest(proxy, count, missBody);
    await stopProxy(proxy);
    return { hit, miss, noCache };
  } finally {
    await Promise.all(mocks.map((m) => m.close()));
  }
}

const pct = (part: number, whole: number): number =>
  whole === 0 ? 0 : Math.round((1000 * part) / whole) / 10;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '4' },
      'cpu-requests': { type: 'string', default: '3000' },
    },
  });
  const ms = Number(values.seconds) * 1000;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cascade-bench-cache-'));
  const rows = [];
  try {
    for (const chain of CHAINS) {
      const mix = chain.mix(ms);
      const off = await run(dir, chain, CACHE_OFF, mix);
      const on = await run(dir, chain, CACHE_ON, mix);
      rows.push({
        mix: chain.name,
        requests: mix.length,
        methods: [...new Set(mix.map((r) => r.method))].length,
        upstream_without_cache: off.upstream,
        upstream_with_cache: on.upstream,
        upstream_saved_percent: pct(off.upstream - on.upstream, off.upstream),
        credits_without_cache: off.credits,
        credits_with_cache: on.credits,
        credits_saved_percent: pct(off.credits - on.credits, off.credits),
        hits: on.hits,
        coalesced: on.coalesced,
        rpc_credits_saved_total: on.creditsSavedMetric,
        bad_answers: off.bad + on.bad,
      });
      console.log(JSON.stringify(rows.at(-1)));
    }
    const cpu = await cpuCosts(dir, Number(values['cpu-requests']));
    console.log(JSON.stringify(cpu));
    const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, Node ${process.version}, ${os.platform()} ${os.release()}`;
    const report = {
      date: new Date().toISOString(),
      machine,
      seconds: Number(values.seconds),
      upstream_delay_ms: UPSTREAM_DELAY_MS,
      mixes: rows,
      cpu_us_per_request: {
        hit: Math.round(cpu.hit),
        miss: Math.round(cpu.miss),
        without_cache: Math.round(cpu.noCache),
      },
    };
    mkdirSync(path.join(REPO_ROOT, 'results'), { recursive: true });
    writeFileSync(
      path.join(REPO_ROOT, 'results/cache.json'),
      `${JSON.stringify(report, null, 2)}\n`,
    );
    writeFileSync(path.join(REPO_ROOT, 'results/cache.md'), markdown(report));
    console.log(markdown(report));
  } finally {
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

function markdown(report: {
  date: string;
  machine: string;
  seconds: number;
  mixes: Array<Record<string, string | number>>;
  cpu_us_per_request: { hit: number; miss: number; without_cache: number };
}): string {
  const cpu = report.cpu_us_per_request;
  return [
    '# What the cache and coalescing save',
    '',
    `${report.date} — \`npm run bench:cache\`; ${report.machine}.`,
    '',
    `Each mix (benchmarks/cache-mix.ts) replayed for ${report.seconds} s at its own timing through`,
    '`cascade serve`, once with `[cache] enabled = false, coalesce = false` and once with the',
    `shipped \`[cache]\`, in front of two mock nodes answering in ${UPSTREAM_DELAY_MS} ms. Upstream requests are the`,
    'mocks\u2019 counts; credits are what the proxy booked (rpc_node_quota_used). Every answer',
    'was checked: status 200 and the client\u2019s own id.',
    '',
    '| mix | requests | upstream, no cache | upstream, cache | saved | credits, no cache | credits, cache | saved | hits | coalesced | bad answers |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...report.mixes.map(
      (r) =>
        `| ${r.mix} | ${r.requests} | ${r.upstream_without_cache} | ${r.upstream_with_cache} | ${r.upstream_saved_percent}% | ${r.credits_without_cache} | ${r.credits_with_cache} | ${r.credits_saved_percent}% | ${r.hits} | ${r.coalesced} | ${r.bad_answers} |`,
    ),
    '',
    'Proxy CPU per request (user + system, every thread; 16 clients at a time):',
    '',
    '| request | CPU per request |',
    '| --- | ---: |',
    `| hit (getGenesisHash from the cache) | ${cpu.hit} µs |`,
    `| miss (getBalance, unique params, through the cache layer to a node) | ${cpu.miss} µs |`,
    `| the same miss with the cache and coalescing off | ${cpu.without_cache} µs |`,
    '',
  ].join('\n');
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
