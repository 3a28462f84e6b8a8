/**
 * Throughput of one mock node (delay 0) on one core: the node runs in a child process, this
 * process drives autocannon at it (50 connections POSTing getHealth for ~5 s, after a 1 s
 * warm-up) and writes results/mock-throughput.json. Run from the repository root:
 *
 *     npm run bench:mock [-- --duration 5 --connections 50]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startMockNode } from '../src/mock/index.js';

const OUTPUT = path.resolve('results', 'mock-throughput.json');
const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
const WARM_UP_S = 1;

/** Child side: start the node on 127.0.0.1, report its URL, stop when the parent leaves. */
async function serve(): Promise<void> {
  const node = await startMockNode({ name: 'bench', host: '127.0.0.1', port: 0 });
  process.send?.({ url: node.url });
  process.on('message', () => process.send?.({ cpu: process.cpuUsage() }));
  process.on('disconnect', () => void node.close());
}

/** CPU time (µs) the child has used so far. */
function childCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (message: { cpu: NodeJS.CpuUsage }) =>
      resolve(message.cpu.user + message.cpu.system),
    );
    child.send('cpu');
  });
}

function startChild(): { child: ChildProcess; url: Promise<string> } {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { stdio: 'inherit' });
  const url = new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`mock node process exited (${code})`)));
  });
  return { child, url };
}

function load(url: string, connections: number, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections,
    duration,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
  });
}

async function bench(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '50' },
    },
  });
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const { child, url } = startChild();
  try {
    const target = await url;
    await load(target, connections, WARM_UP_S);
    const cpuBefore = await childCpu(child);
    const started = performance.now();
    const result = await load(target, connections, duration);
    const elapsedMs = performance.now() - started;
    // Share of one core the node used: below 1 means the load generator, not the node, was the limit.
    const nodeCpu = ((await childCpu(child)) - cpuBefore) / 1000 / elapsedMs;
    const summary = {
      date: new Date().toISOString(),
      what: 'one mock node (delay 0) in its own process; autocannon POSTing getHealth',
      node: process.version,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      connections,
      duration_s: duration,
      requests_per_s: Math.round(result.requests.average),
      requests_total: result.requests.total,
      node_cpu_share_of_one_core: Number(nodeCpu.toFixed(2)),
      requests_per_s_per_busy_core: Math.round(result.requests.average / nodeCpu),
      latency_ms: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      errors: result.errors,
      timeouts: result.timeouts,
      non_2xx: result.non2xx,
    };
    mkdirSync(path.dirname(OUTPUT), { recursive: true });
    writeFileSync(OUTPUT, `${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(
      `${summary.requests_per_s} req/s, p50 ${summary.latency_ms.p50} ms, ` +
        `p99 ${summary.latency_ms.p99} ms (${connections} connections, ${duration} s); ` +
        `node used ${Math.round(nodeCpu * 100)}% of a core (≈ ${summary.requests_per_s_per_busy_core} req/s per busy core) → ${OUTPUT}\n`,
    );
  } finally {
    child.disconnect();
  }
}

if (process.argv.includes('--serve')) await serve();
else await bench();
