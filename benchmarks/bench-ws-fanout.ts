/**
 * WebSocket fan-out through `cascade serve`: 1,000 clients on one `slotSubscribe` (one
 * upstream subscription, shared), a mock node on a manual chain advancing slots as fast as the
 * slowest client keeps up (at most a few slots ahead). Measured: notifications delivered per
 * second over all clients, and the proxy's CPU time (user + system, /proc) per delivered
 * notification. The clients and the mock run in this process, so on a small machine they
 * compete with the proxy for CPU: the rate is a floor, the CPU per notification is the proxy's
 * own. Writes results/ws-fanout.json and .md. Linux only (/proc). From the repository root:
 *
 *     npm run bench:ws [-- --clients 1000 --seconds 10]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { readProcess } from '../src/bench/process-stats.js';
import { MockChain, startMockNodes } from '../src/mock/index.js';
import { spawnServe, type ServeChild } from './hotpath-targets.js';

const REPO_ROOT = path.resolve('.');
/** How far the chain may run ahead of the slowest client (slots). */
const AHEAD = 4;

/** Starts `cascade serve` in front of `nodeUrl`; resolves with the process and its ws:// URL. */
async function startProxy(dir: string, nodeUrl: string, clients: number): Promise<ServeChild> {
  writeFileSync(
    path.join(dir, 'prices.toml'),
    '[routing]\n[limits]\nunknown_method_cost = 1\n[websocket]\n',
  );
  writeFileSync(
    path.join(dir, 'config.toml'),
    `[server]\nhost = "127.0.0.1"\nport = 0\nws_max_connections_per_ip = ${clients + 10}\n` +
      `[[nodes]]\nname = "a"\nurl = "${nodeUrl}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "prices.toml"\n`,
  );
  const proxy = await spawnServe(REPO_ROOT, 'config.toml', dir);
  return { child: proxy.child, url: proxy.url.replace('http', 'ws') };
}

/** A client that counts the notifications it receives and remembers the last slot. */
interface Counter {
  readonly socket: WebSocket;
  received: number;
  lastSlot: number;
}

async function connect(url: string): Promise<Counter> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  const counter: Counter = { socket, received: 0, lastSlot: -1 };
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const subscribed = new Promise<void>((resolve) => {
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as {
        id?: number;
        params?: { result: { slot: number } };
      };
      if (message.id === 1) return resolve();
      if (message.params === undefined) return;
      counter.received++;
      counter.lastSlot = message.params.result.slot;
    });
  });
  socket.send('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
  await subscribed;
  return counter;
}

/** Advances the chain, never more than AHEAD slots past the slowest client, until `until`. */
async function drive(chain: MockChain, counters: readonly Counter[], until: number): Promise<void> {
  while (performance.now() < until) {
    const slowest = counters.reduce((min, c) => Math.min(min, c.lastSlot), Infinity);
    if (chain.slot() - slowest < AHEAD) chain.advanceSlots(1);
    else await new Promise((resolve) => setImmediate(resolve));
  }
}

const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '1000' },
      seconds: { type: 'string', default: '10' },
    },
  });
  const clients = Number(values.clients);
  const seconds = Number(values.seconds);
  if (!Number.isInteger(clients) || clients < 1 || clients > 10_000)
    throw new RangeError(`--clients ${values.clients}: a whole number from 1 to 10000`);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 20)
    throw new RangeError(`--seconds ${values.seconds}: more than 0, at most 20`);
  const chain = new MockChain({ manual: true });
  const [mock] = await startMockNodes([{ name: 'a', chain }]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cascade-ws-fanout-'));
  const { child, url } = await startProxy(dir, mock!.url, clients);
  const counters: Counter[] = [];
  try {
    for (let i = 0; i < clients; i += 50) {
      const batch = Math.min(50, clients - i);
      counters.push(...(await Promise.all(Array.from({ length: batch }, () => connect(url)))));
    }
    const upstreamSubscribes = mock!.ws.stats().subscribes.slotSubscribe ?? 0;
    for (const counter of counters) counter.lastSlot = chain.slot();
    // Warm-up: one second of traffic before measuring.
    await drive(chain, counters, performance.now() + 1000);
    const cpuBefore = cpuSeconds(child.pid!);
    const deliveredBefore = counters.reduce((sum, c) => sum + c.received, 0);
    const started = performance.now();
    await drive(chain, counters, started + seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    const cpuAfter = cpuSeconds(child.pid!);
    const delivered = counters.reduce((sum, c) => sum + c.received, 0) - deliveredBefore;
    const cpu =
      cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    const row = {
      clients,
      upstream_subscriptions: upstreamSubscribes,
      seconds: round(elapsed, 2),
      upstream_notifications_per_s: round(delivered / clients / elapsed),
      delivered_per_s: Math.round(delivered / elapsed),
      proxy_cpu_seconds: cpu === undefined ? null : round(cpu, 2),
      proxy_cpu_us_per_notification: cpu === undefined ? null : round((cpu * 1e6) / delivered, 2),
      /** What one core of the proxy alone would deliver at that cost. */
      proxy_core_capacity_per_s:
        cpu === undefined || cpu === 0 ? null : Math.round(delivered / cpu),
    };
    const machine = `${os.availableParallelism()} × ${os.cpus()[0]?.model ?? 'unknown'}, Node ${process.version}`;
    const md = [
      '# WebSocket fan-out through cascade serve',
      '',
      `${new Date().toISOString()} — \`npm run bench:ws\`; ${machine}. ${clients} clients on one`,
      'slotSubscribe (shared upstream), a manual mock chain kept at most',
      `${AHEAD} slots ahead of the slowest client; clients and mock share this process.`,
      '',
      '| clients | upstream subscriptions | slots/s | notifications delivered/s | proxy CPU per notification | one proxy core at that cost |',
      '| ---: | ---: | ---: | ---: | ---: | ---: |',
      `| ${row.clients} | ${row.upstream_subscriptions} | ${row.upstream_notifications_per_s} | ${row.delivered_per_s} | ${row.proxy_cpu_us_per_notification ?? 'n/a'} µs | ${row.proxy_core_capacity_per_s ?? 'n/a'}/s |`,
      '',
      `The delivered rate is bound by the ${row.clients.toLocaleString('en-US')} clients sharing this process (and the machine);`,
      "the proxy's own cost is the CPU per notification.",
      '',
    ].join('\n');
    const out = path.join(REPO_ROOT, 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      path.join(out, 'ws-fanout.json'),
      `${JSON.stringify({ date: new Date().toISOString(), machine, ...row }, null, 2)}\n`,
    );
    writeFileSync(path.join(out, 'ws-fanout.md'), md);
    process.stdout.write(`${md}\n→ results/ws-fanout.json, results/ws-fanout.md\n`);
  } finally {
    for (const counter of counters) counter.socket.terminate();
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await mock!.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:ws failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});

/** User + system CPU seconds of `pid` so far; undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  const reading = readProcess(pid);
  return reading === undefined ? undefined : reading.cpuMicros / 1e6;
}
