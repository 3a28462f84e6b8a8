/**
 * What gzip costs and saves on big answers through `cascade serve`: for each kind of answer
 * (scripts/compression-payloads.ts) and size, a client asks for the same answer through one
 * cascade process, from a local upstream, with and without `Accept-Encoding: gzip`, in
 * alternating rounds. Measured: the bytes on the wire each way, and the proxy's CPU (utime +
 * stime of every thread, from /proc) per MB of answer each way — the difference is what
 * compressing costs. A second table compresses the same answers in this process at zlib
 * levels 1, 6 and 9, to show what cascade's level 1 gives up. Writes results/compression.json
 * and .md. Linux only (/proc). Run from the repository root:
 *
 *     npm run bench:compression [-- --sizes 1,5,20 --mb-per-round 40]     # sizes in MB
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { startMockNode } from '../src/mock/index.js';
import {
  randomProgramAccounts,
  tokenAccountsBase64,
  tokenAccountsJsonParsed,
} from './compression-payloads.js';
import { cpuSeconds } from './hotpath-proc.js';

const REPO_ROOT = path.resolve('.');
const MB = 1_000_000;
const ROUNDS = 3;

/** The mock nodes' `responseBytes` padding: one mid-sized account repeated (the best case). */
async function mockPadding(bytes: number): Promise<Buffer> {
  const mock = await startMockNode({ name: 'padding', port: 0, responseBytes: bytes });
  try {
    return (await fetchAnswer(mock.url, REQUEST, false, true)).bytes!;
  } finally {
    await mock.close();
  }
}

/** The answers measured, from the least to the most compressible. */
const KINDS = [
  { name: 'program accounts, random data (worst case)', build: randomProgramAccounts },
  { name: 'token accounts, base64', build: tokenAccountsBase64 },
  { name: 'token accounts, jsonParsed', build: tokenAccountsJsonParsed },
  { name: 'mock padding (one account repeated)', build: mockPadding },
] as const;

type Kind = (typeof KINDS)[number];
const REQUEST = '{"jsonrpc":"2.0","id":1,"method":"getProgramAccounts","params":["x"]}';

/** An upstream answering whatever `answer` holds now. */
class FixedUpstream {
  answer: Buffer = Buffer.alloc(0);
  readonly server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(this.answer);
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Starts `cascade serve` with one node (compression at its defaults); resolves with its URL. */
function startProxy(
  dir: string,
  upstreamUrl: string,
): Promise<{ child: ChildProcess; url: string }> {
  const config = path.join(dir, 'config.toml');
  const prices = path.join(REPO_ROOT, 'config/provider_config/solana.toml');
  writeFileSync(
    config,
    `[server]\nhost = "127.0.0.1"\nport = 0\nrequest_timeout_ms = 60000\nattempt_timeout_ms = 30000\n` +
      `[[nodes]]\nname = "big"\nurl = "${upstreamUrl}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "${prices}"\n`,
  );
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'dist/cli.js'), 'serve', '--config', config],
    { cwd: dir, env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n').find((l) => l.includes('cascade serving'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.once('exit', (code) => reject(new Error(`cascade serve exited (${code})`)));
  });
}

/** One POST; resolves with the bytes on the wire (kept only when `keep`) and their count. */
function fetchAnswer(
  url: string,
  body: string,
  gzip: boolean,
  keep = false,
): Promise<{ length: number; encoding: string | undefined; bytes: Buffer | undefined }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (gzip) headers['accept-encoding'] = 'gzip';
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let length = 0;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (keep) chunks.push(chunk);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} from ${url}`));
        const encoding = res.headers['content-encoding'];
        resolve({ length, encoding, bytes: keep ? Buffer.concat(chunks) : undefined });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Row {
  readonly kind: string;
  readonly answer_bytes: number;
  readonly gzip_bytes: number;
  readonly saved_percent: number;
  readonly ratio: number;
  /** Proxy CPU per MB of answer relayed as it came. */
  readonly identity_cpu_ms_per_mb: number;
  /** Proxy CPU per MB of answer relayed gzipped. */
  readonly gzip_cpu_ms_per_mb: number;
  /** The difference: what compressing one MB of answer costs. */
  readonly compression_cpu_ms_per_mb: number;
  readonly requests_per_mode: number;
}

/** Proxy CPU seconds spent on `count` answers of one mode. */
async function cpuFor(pid: number, url: string, gzip: boolean, count: number): Promise<number> {
  const before = cpuSeconds(pid)!;
  for (let i = 0; i < count; i++) await fetchAnswer(url, REQUEST, gzip);
  // The proxy's last writes may still be accounted a moment after the client has the bytes.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return cpuSeconds(pid)! - before;
}

async function measure(
  proxy: { child: ChildProcess; url: string },
  kind: Kind,
  answer: Buffer,
  mbPerRound: number,
): Promise<Row> {
  const pid = proxy.child.pid!;
  const identity = await fetchAnswer(proxy.url, REQUEST, false, true);
  const gzipped = await fetchAnswer(proxy.url, REQUEST, true, true);
  if (!identity.bytes!.equals(answer)) throw new Error(`${kind.name}: identity bytes differ`);
  if (gzipped.encoding !== 'gzip') throw new Error(`${kind.name}: the answer was not gzipped`);
  if (!gunzipSync(gzipped.bytes!).equals(answer)) {
    throw new Error(`${kind.name}: the gzipped answer does not decompress to the upstream's`);
  }
  const count = Math.max(2, Math.round((mbPerRound * MB) / answer.length));
  let identityCpu = 0;
  let gzipCpu = 0;
  for (let i = 0; i < ROUNDS; i++) {
    identityCpu += await cpuFor(pid, proxy.url, false, count);
    gzipCpu += await cpuFor(pid, proxy.url, true, count);
  }
  const mb = (answer.length * count * ROUNDS) / MB;
  const identityMs = (identityCpu * 1000) / mb;
  const gzipMs = (gzipCpu * 1000) / mb;
  return {
    kind: kind.name,
    answer_bytes: answer.length,
    gzip_bytes: gzipped.length,
    saved_percent: round(100 * (1 - gzipped.length / answer.length)),
    ratio: round(answer.length / gzipped.length, 2),
    identity_cpu_ms_per_mb: round(identityMs, 2),
    gzip_cpu_ms_per_mb: round(gzipMs, 2),
    compression_cpu_ms_per_mb: round(gzipMs - identityMs, 2),
    requests_per_mode: count * ROUNDS,
  };
}

interface LevelRow {
  readonly kind: string;
  readonly level: number;
  readonly ratio: number;
  readonly cpu_ms_per_mb: number;
}

/** zlib alone, in this process, on one answer of each kind: the cost and ratio per level. */
function levels(answers: ReadonlyMap<string, Buffer>): LevelRow[] {
  const rows: LevelRow[] = [];
  for (const [kind, answer] of answers) {
    for (const level of [1, 6, 9]) {
      gzipSync(answer, { level });
      const repeats = 3;
      let size = 0;
      const before = process.cpuUsage();
      for (let i = 0; i < repeats; i++) size = gzipSync(answer, { level }).length;
      const used = process.cpuUsage(before);
      const ms = (used.user + used.system) / 1000;
      rows.push({
        kind,
        level,
        ratio: round(answer.length / size, 2),
        cpu_ms_per_mb: round(ms / ((answer.length * repeats) / MB), 2),
      });
    }
  }
  return rows;
}

const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

function markdown(machine: string, rows: readonly Row[], levelRows: readonly LevelRow[]): string {
  const mb = (bytes: number) => (bytes / MB).toFixed(2);
  return [
    '# gzip for big answers through cascade serve',
    '',
    `${new Date().toISOString()} — \`npm run bench:compression\`; ${machine}.`,
    '',
    'One cascade process (compression at its defaults: zlib level 1, answers ≥ 1024 bytes) in',
    `front of a local upstream; each answer asked ${ROUNDS} × alternately with and without`,
    '`Accept-Encoding: gzip`, every answer checked byte for byte. CPU: the proxy process (every',
    'thread), per MB (10^6 bytes) of answer; "compression" = gzip minus identity. Answers:',
    'scripts/compression-payloads.ts (token accounts laid out as mainnet ones; random data as the',
    'worst case; the mock nodes\u2019 padding, which repeats one account, as the best case).',
    '',
    '| answer | size | gzip on the wire | saved | ratio | proxy CPU/MB identity | proxy CPU/MB gzip | compression CPU/MB |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${mb(r.answer_bytes)} MB | ${mb(r.gzip_bytes)} MB | ${r.saved_percent}% | ${r.ratio}× | ${r.identity_cpu_ms_per_mb} ms | ${r.gzip_cpu_ms_per_mb} ms | ${r.compression_cpu_ms_per_mb} ms |`,
    ),
    '',
    'zlib alone (gzipSync in the benchmark process, the largest answer of each kind), by level:',
    '',
    '| answer | level | ratio | CPU per MB |',
    '| --- | ---: | ---: | ---: |',
    ...levelRows.map((r) => `| ${r.kind} | ${r.level} | ${r.ratio}× | ${r.cpu_ms_per_mb} ms |`),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1,5,20' },
      'mb-per-round': { type: 'string', default: '40' },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  if (sizes.some((n) => !Number.isFinite(n) || n <= 0 || n > 200)) {
    throw new RangeError(`--sizes ${values.sizes}: MB between 1 and 200, comma-separated`);
  }
  const mbPerRound = Number(values['mb-per-round']);
  if (!Number.isFinite(mbPerRound) || mbPerRound <= 0 || mbPerRound > 1000) {
    throw new RangeError(`--mb-per-round ${values['mb-per-round']}: between 1 and 1000`);
  }
  const rows: Row[] = [];
  const largest = new Map<string, Buffer>();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cascade-compression-'));
  const upstream = new FixedUpstream();
  const proxy = await startProxy(dir, await upstream.listen());
  try {
    for (const size of sizes) {
      for (const kind of KINDS) {
        upstream.answer = await kind.build(size * MB);
        rows.push(await measure(proxy, kind, upstream.answer, mbPerRound));
        largest.set(kind.name, upstream.answer);
        process.stdout.write(`${kind.name}, ${size} MB: done\n`);
      }
    }
  } finally {
    proxy.child.kill('SIGTERM');
    await new Promise((resolve) => proxy.child.once('exit', resolve));
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const levelRows = levels(largest);
  const machine = `${os.availableParallelism()} × ${os.cpus()[0]?.model ?? 'unknown'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.type()} ${os.release()}`;
  const md = markdown(machine, rows, levelRows);
  const out = path.join(REPO_ROOT, 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(
    path.join(out, 'compression.json'),
    `${JSON.stringify({ date: new Date().toISOString(), machine, rows, levels: levelRows }, null, 2)}\n`,
  );
  writeFileSync(path.join(out, 'compression.md'), md);
  process.stdout.write(`${md}\n→ results/compression.json, results/compression.md\n`);
}

await main();
