/**
 * The cache benchmark's plumbing (benchmarks/bench-cache.ts): a `cascade serve` child in front of
 * mock nodes, keep-alive POSTs, and reading /metrics.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import path from 'node:path';
import type { MockNode } from '../src/mock/index.js';
import type { MixRequest } from './cache-mix.js';
import { spawnServe } from './hotpath-targets.js';

const REPO_ROOT = path.resolve('.');

/** A chain's proxy: its nodes (name, price list file, tier). */
export interface ProxyNodes {
  readonly nodes: readonly {
    readonly name: string;
    readonly prices: string;
    readonly tier: number;
  }[];
}

/** A running `cascade serve`. */
export interface Proxy {
  readonly child: ChildProcess;
  readonly url: string;
}

/** Starts `cascade serve` with `chain`'s nodes on `mocks` and the `[cache]` text `cache`. */
export function startProxy(
  dir: string,
  chain: ProxyNodes,
  mocks: readonly MockNode[],
  cache: string,
): Promise<Proxy> {
  const config = path.join(dir, 'config.toml');
  // Every run books from zero: no usage restored from an earlier run's quotas.json.
  rmSync(path.join(dir, 'quotas.json'), { force: true });
  const nodes = chain.nodes.map(
    (node, i) =>
      `[[nodes]]\nname = "${node.name}"\nurl = "${mocks[i]!.url}"\ntier = ${node.tier}\n` +
      `monthly_limit = 0\nprovider_pricing_path = "${path.join(REPO_ROOT, 'config/provider_config', node.prices)}"\n`,
  );
  writeFileSync(
    config,
    `[server]\nhost = "127.0.0.1"\nport = 0\nenable_metrics = true\nquotas_path = "quotas.json"\n` +
      `request_timeout_ms = 5000\nattempt_timeout_ms = 2000\n\n${cache}\n${nodes.join('\n')}`,
  );
  return spawnServe(REPO_ROOT, config, dir);
}

/** Stops a proxy (SIGTERM) and waits for it to exit. */
export async function stopProxy(proxy: Proxy): Promise<void> {
  const exited = new Promise((resolve) => proxy.child.once('exit', resolve));
  proxy.child.kill('SIGTERM');
  await exited;
}

/** Keep-alive connections for every request of the benchmark. */
export const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** One POST; resolves with the status and the body text. */
export function post(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Replays `mix` at its offsets; counts answers that are not 200 with the client's id. */
export async function replay(
  url: string,
  mix: readonly MixRequest[],
): Promise<{ sent: number; bad: number }> {
  const start = performance.now();
  const pending: Array<Promise<boolean>> = [];
  for (const [i, call] of mix.entries()) {
    const wait = start + call.at - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const id = `c${i}`;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method: call.method, params: call.params });
    pending.push(
      post(url, body).then(
        (r) => r.status === 200 && r.text.includes(`"id":"${id}"`),
        () => false,
      ),
    );
  }
  const results = await Promise.all(pending);
  return { sent: results.length, bad: results.filter((ok) => !ok).length };
}

/** Sum of a metric's series in the proxy's /metrics text. */
export function metricSum(text: string, name: string, filter = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!line.includes(filter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** The proxy's /metrics text. */
export async function scrape(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(`${url}/metrics`, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString()));
    })
      .on('error', reject)
      .end();
  });
}
