/**
 * Throughput of one mock node (delay 0) on one core: the node runs in a child process, this
 * process drives autocannon at it (50 connections POSTing getHealth for ~5 s, after a 1 s
 * lead-in) and writes results/mock-throughput.json. Run from the repository root:
 *
 *     npm run bench:mock [-- --duration 5 --connections 50]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad } from '../src/bench/load-runner.js';
import { startMockProcess } from '../src/mock/index.js';

const OUTPUT = path.resolve('results', 'mock-throughput.json');
const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
const LEAD_IN_S = 1;

async function bench(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '50' },
    },
  });
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  const mock = await startMockProcess([{ name: 'bench', host: '127.0.0.1', port: 0 }]);
  try {
    let cpuBefore = 0;
    const run = await runLoad({
      url: mock.nodes[0]!.url,
      body: BODY,
      connections,
      durationS: duration,
      leadInS: LEAD_IN_S,
      onMeasureStart: async () => {
        cpuBefore = await mock.cpuMicros();
      },
    });
    const cpuMicros = (await mock.cpuMicros()) - cpuBefore;
    // Share of one core the node used: below 1 means the load generator, not the node, was the limit.
    const nodeCpu = cpuMicros / 1e6 / run.elapsedS;
    const requestsPerS = run.ok / run.elapsedS;
    const latency = run.latency.summary();
    const summary = {
      date: new Date().toISOString(),
      what: 'one mock node (delay 0) in its own process; autocannon POSTing getHealth',
      node: process.version,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.cpus().length,
      connections,
      duration_s: duration,
      requests_per_s: Math.round(requestsPerS),
      requests_total: run.responses,
      node_cpu_share_of_one_core: Number(nodeCpu.toFixed(2)),
      requests_per_s_per_busy_core: Math.round(requestsPerS / nodeCpu),
      latency_ms: { p50: latency.p50, p99: latency.p99, max: latency.max },
      errors: run.errors,
      timeouts: run.timeouts,
      non_2xx: run.non2xx,
    };
    mkdirSync(path.dirname(OUTPUT), { recursive: true });
    writeFileSync(OUTPUT, `${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(
      `${summary.requests_per_s} req/s, p50 ${summary.latency_ms.p50} ms, ` +
        `p99 ${summary.latency_ms.p99} ms (${connections} connections, ${duration} s); ` +
        `node used ${Math.round(nodeCpu * 100)}% of a core (≈ ${summary.requests_per_s_per_busy_core} req/s per busy core) → ${OUTPUT}\n`,
    );
  } finally {
    await mock.close();
  }
}

await bench();
