/**
 * Large answers through `cascade serve`: for each size, a fresh proxy process relays one
 * result-first getProgramAccounts answer from a local upstream to a client that counts the
 * bytes. Measured: how much the proxy's peak RSS (VmHWM) grows over its warmed-up baseline,
 * and when the client's first byte arrives compared with the upstream's last byte leaving.
 * Writes results/big-answer.json and .md. Linux only (/proc). Run from the repository root:
 *
 *     npm run bench:big-answer [-- --sizes 20,64,200]      # MiB
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BigAnswerUpstream, fetchLength } from './big-answer.js';
import { startOneNodeProxy } from './one-node-proxy.js';
import { readProcess } from '../src/bench/process-stats.js';

const REPO_ROOT = path.resolve('.');
const WARM_UP_REQUESTS = 50;

function peakRss(pid: number): number {
  const reading = readProcess(pid);
  if (reading === undefined) throw new Error(`no VmHWM for pid ${pid} (Linux /proc needed)`);
  return reading.peakRssKiB * 1024;
}

interface Row {
  readonly answer_mib: number;
  readonly baseline_rss_mib: number;
  readonly rss_growth_mib: number;
  readonly rss_growth_to_size: number;
  readonly first_byte_before_upstream_last_ms: number;
  readonly total_ms: number;
}

async function measure(
  sizeMiB: number,
  upstream: BigAnswerUpstream,
  upstreamUrl: string,
): Promise<Row> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cascade-big-answer-'));
  const { child, url } = await startOneNodeProxy(dir, upstreamUrl);
  try {
    upstream.size = 4096;
    for (let i = 0; i < WARM_UP_REQUESTS; i++) await fetchLength(url);
    const before = peakRss(child.pid!);
    upstream.size = sizeMiB * 1024 * 1024;
    const started = performance.now();
    const answer = await fetchLength(url);
    const ended = performance.now();
    if (answer.status !== 200 || answer.length !== upstream.size) {
      throw new Error(`${sizeMiB} MiB: got HTTP ${answer.status} with ${answer.length} bytes`);
    }
    const growth = peakRss(child.pid!) - before;
    return {
      answer_mib: sizeMiB,
      baseline_rss_mib: round(before / 2 ** 20),
      rss_growth_mib: round(growth / 2 ** 20),
      rss_growth_to_size: round(growth / upstream.size, 2),
      first_byte_before_upstream_last_ms: round(upstream.lastByteAt - answer.firstByteAt),
      total_ms: round(ended - started),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sizes: { type: 'string', default: '20,64,200' } } });
  const sizes = values.sizes.split(',').map(Number);
  if (sizes.some((n) => !Number.isFinite(n) || n <= 0 || n > 500)) {
    throw new RangeError(`--sizes ${values.sizes}: MiB between 1 and 500, comma-separated`);
  }
  const upstream = new BigAnswerUpstream();
  const upstreamUrl = await upstream.listen();
  const rows: Row[] = [];
  try {
    for (const size of sizes) rows.push(await measure(size, upstream, upstreamUrl));
  } finally {
    await upstream.close();
  }
  const machine = `${os.availableParallelism()} × ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
  const md = [
    '# Large answers through cascade serve',
    '',
    `${new Date().toISOString()} — \`npm run bench:big-answer\`; ${machine}. One fresh proxy per size,`,
    `warmed up with ${WARM_UP_REQUESTS} small answers; growth = peak RSS (VmHWM) after the answer minus before.`,
    '',
    '| answer | proxy RSS before | peak RSS growth | growth / size | client\u2019s first byte before the upstream\u2019s last | whole answer |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.answer_mib} MiB | ${r.baseline_rss_mib} MiB | ${r.rss_growth_mib} MiB | ${r.rss_growth_to_size}× | ${r.first_byte_before_upstream_last_ms} ms | ${r.total_ms} ms |`,
    ),
    '',
  ].join('\n');
  const dir = path.join(REPO_ROOT, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'big-answer.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine, rows }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, 'big-answer.md'), md);
  process.stdout.write(`${md}\n→ results/big-answer.json, results/big-answer.md\n`);
}

await main();
