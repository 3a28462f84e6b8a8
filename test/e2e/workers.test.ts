/**
 * `cascade serve --workers 2`: two processes behind one port that behave as one proxy toward
 * the provider — one rate limit, one usage, one /health — and survive a worker crashing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { recordingUpstream, stopRecordingUpstreams } from '../support/recording-upstream.js';
import { busiestWindow } from '../support/arrivals.js';
import { postOnNewConnection } from '../support/fresh-connection.js';
import { holdWorker, type HeldWorker } from '../support/held-worker.js';
import { workerPids } from '../support/worker-pids.js';

let temp: TempDir | undefined;
let proxy: CliProcess | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  if (proxy && proxy.child.exitCode === null) await proxy.stop('SIGKILL');
  proxy = undefined;
  stopRecordingUpstreams();
  temp?.cleanup();
  temp = undefined;
});

/** Routing tests send identical requests at once: every one must reach the node. */
const NO_CACHE = '[cache]\nenabled = false\ncoalesce = false\n';

async function startWorkers(
  upstream: string,
  node: string,
  cache = NO_CACHE,
  held?: HeldWorker,
): Promise<{ url: string; quotas: string; admin: number }> {
  temp ??= makeTempDir('cascade-workers-');
  const port = await freePort();
  const admin = await freePort();
  writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
  writeFileSync(
    temp.path('config.toml'),
    `[server]\nhost = "127.0.0.1"\nport = ${port}\nenable_metrics = true\nadmin_port = ${admin}\n\n` +
      `${cache}\n` +
      `[[nodes]]\nname = "n"\nurl = "${upstream}"\ntier = 0\nmonthly_limit = 0\n` +
      `provider_pricing_path = "prices.toml"\n${node}\n`,
  );
  proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], {
    cwd: temp.dir,
    env: held?.env ?? {},
  });
  // Announced once both workers listen (worker 1 alone when worker 2 is held).
  await proxy.waitFor(held ? /"worker":1,.*worker serving/ : /workers share the port/);
  return { url: `http://127.0.0.1:${port}`, quotas: temp.path('quotas.json'), admin };
}

function post(url: string, id: number): Promise<number> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: `{"jsonrpc":"2.0","id":${id},"method":"getSlot"}`,
  }).then(
    async (response) => {
      await response.text();
      return response.status;
    },
    () => 0,
  );
}

/**
 * The longest any of cascade's processes held up its event loop since the previous scrape
 * (ms): prom-client resets its delay monitor at each scrape, and the workers' series combine
 * by their maximum.
 */
async function proxyStallMs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const found = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  expect(found, 'cascade /metrics has nodejs_eventloop_lag_max_seconds').not.toBeNull();
  return Number(found![1]) * 1000;
}

describe('cascade serve --workers 2', { timeout: 180_000 }, () => {
  it('keeps a 200 rps node at its limit (+ one burst) in every second, and books exactly what it sent', async () => {
    const upstream = await recordingUpstream();
    const { url, quotas } = await startWorkers(upstream.url, 'rps_limit = 200');
    // A scrape resets each process's event-loop delay monitor: the next one covers the load.
    await proxyStallMs(url);
    // 1,000 requests/s for 5 s, sent at a fixed rate whatever the answers do.
    const sent: Array<Promise<number>> = [];
    for (let tick = 0; tick < 50; tick++) {
      for (let k = 0; k < 100; k++) sent.push(post(url, tick * 100 + k));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const statuses = await Promise.all(sent);
    const { arrivals, stallMs } = await upstream.report();
    const workerStallMs = await proxyStallMs(url);
    // (Requests over the limit wait for a token, then time out: a slow machine serves fewer,
    // never more.)
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    // cascade admits at most the rate + one burst in any second of its own clock; the upstream
    // stamps a request when its event loop gets to it. A stall of a worker's loop between
    // admitting a request and writing it, and a stall of the upstream's loop before reading it
    // (the machine starved), each move a request later by up to that stall (+ the monitors'
    // 10 ms resolution), so a 1 s window of stamps holds what was admitted in up to 1 s + both
    // stalls (a few requests on a quiet machine).
    const stampSlack = Math.ceil((200 * (stallMs + workerStallMs + 20)) / 1000);
    expect(busiestWindow(arrivals, 1000)).toBeLessThanOrEqual(200 + 200 + stampSlack);
    // Across the whole run: the rate plus one burst at most.
    const span = (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
    expect(arrivals.length).toBeLessThanOrEqual(200 * Math.ceil(span) + 200);
    expect(await proxy!.stop('SIGTERM')).toBe(0);
    // Every credit booked is a request the node received, and the other way round.
    const usage = JSON.parse(readFileSync(quotas, 'utf8')) as Record<string, { used: number }>;
    expect(usage.n!.used).toBe(arrivals.length);
  });

  it('counts the credits every worker’s cache saved, in /metrics and in quotas.json', async () => {
    const upstream = await recordingUpstream();
    const { url, quotas } = await startWorkers(upstream.url, '', '[cache]\n');
    const ask = (id: number) =>
      fetch(url, {
        method: 'POST',
        body: `{"jsonrpc":"2.0","id":${id},"method":"getGenesisHash"}`,
      });
    // Sequential requests: each worker's first is a miss, every later one a hit.
    for (let id = 0; id < 10; id++) expect((await ask(id)).status).toBe(200);
    const { arrivals } = await upstream.report();
    const saved = 10 - arrivals.length;
    expect(saved).toBeGreaterThanOrEqual(8);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain(`rpc_credits_saved_total{node="n"} ${saved}`);
    expect(await proxy!.stop('SIGTERM')).toBe(0);
    const usage = JSON.parse(readFileSync(quotas, 'utf8')) as Record<
      string,
      { used: number; saved?: number }
    >;
    expect(usage.n).toMatchObject({ used: arrivals.length, saved });
  });

  it('answers /metrics while a worker is still starting, and adds it in once it serves', async () => {
    // Worker 2 is held before any of cascade runs in it until the test releases it.
    temp = makeTempDir('cascade-workers-');
    const held = holdWorker(temp, 2);
    const upstream = await recordingUpstream();
    const { url } = await startWorkers(upstream.url, '', NO_CACHE, held);
    for (let i = 0; i < 5; i++) expect(await post(url, i)).toBe(200);
    const early = await fetch(`${url}/metrics`);
    expect(early.status).toBe(200);
    expect(await early.text()).toMatch(/^rpc_requests_total\{outcome="forwarded"\} 5$/m);

    held.release();
    await proxy!.waitFor(/"worker":2,.*worker serving/);
    // A new connection each: the workers take turns, the late one serves half of these.
    for (let i = 0; i < 20; i++) {
      const body = `{"jsonrpc":"2.0","id":${i},"method":"getSlot"}`;
      expect((await postOnNewConnection(url, body)).status).toBe(200);
    }
    const both = await (await fetch(`${url}/metrics`)).text();
    expect(both).toMatch(/^rpc_requests_total\{outcome="forwarded"\} 25$/m);
  });

  it('serves with metrics_port: the primary holds it, the workers take the main port', async () => {
    const upstream = await recordingUpstream();
    const metricsPort = await freePort();
    // (Keys after the blank line still belong to [server].)
    const { url } = await startWorkers(
      upstream.url,
      '',
      `metrics_port = ${metricsPort}\n${NO_CACHE}`,
    );
    for (let i = 0; i < 8; i++) {
      const body = `{"jsonrpc":"2.0","id":${i},"method":"getSlot"}`;
      expect((await postOnNewConnection(url, body)).status).toBe(200);
    }
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^rpc_requests_total\{outcome="forwarded"\} 8$/m);
    // As with one process: /metrics is on its own port only.
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    expect(proxy!.output()).not.toMatch(/already in use/);
  });

  it('stops with the error and exit 1 when the workers cannot bind the port', async () => {
    const upstream = await recordingUpstream();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      temp = makeTempDir('cascade-workers-');
      writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
      writeFileSync(
        temp.path('config.toml'),
        `[server]\nhost = "127.0.0.1"\nport = ${port}\n\n[[nodes]]\nname = "n"\n` +
          `url = "${upstream.url}"\ntier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
      );
      proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2'], { cwd: temp.dir });
      expect(await proxy.exited()).toBe(1);
      expect(proxy.output()).toContain(`error: proxy: 127.0.0.1:${port} is already in use`);
      expect(proxy.output()).toMatch(/a worker could not start serving: stopping/);
    } finally {
      holder.close();
    }
  });

  it('answers /health and /metrics for the whole proxy', async () => {
    const upstream = await recordingUpstream();
    const { url } = await startWorkers(upstream.url, '');
    for (let i = 0; i < 20; i++) expect(await post(url, i)).toBe(200);
    const health = (await (await fetch(`${url}/health`)).json()) as {
      nodes: Array<{ status: string }>;
    };
    expect(health.nodes[0]!.status).toBe('up');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    // Counted by both workers, added up: every request once.
    expect(metrics).toMatch(/^rpc_requests_total\{outcome="forwarded"\} 20$/m);
    expect(metrics).toMatch(/^cascade_cluster_members 1$/m);
    // Histograms keep their labels when added up over the workers.
    expect(metrics).toMatch(/^rpc_request_duration_seconds_count\{outcome="forwarded"\} 20$/m);
    expect(metrics).toMatch(
      /^rpc_upstream_duration_seconds_count\{node="n",outcome="success"\} 20$/m,
    );
    // These came over one connection, to one worker: the other has no latency to average in,
    // and that is no reason for NaN (set at the next ranking tick, once a second).
    await expect
      .poll(async () => {
        const text = await (await fetch(`${url}/metrics`)).text();
        return /^rpc_node_latency_ema_seconds\{node="n",tier="0"\} (\S+)$/m.exec(text)?.[1];
      })
      .toMatch(/^\d/);
  });

  it("describes the whole proxy on the primary's admin listener, and cordons in every worker", async () => {
    const upstream = await recordingUpstream();
    const { url, admin } = await startWorkers(upstream.url, '');
    for (let i = 0; i < 20; i++) expect(await post(url, i), proxy!.output()).toBe(200);
    const nodes = async () =>
      (await (await fetch(`http://127.0.0.1:${admin}/admin/nodes`)).json()) as {
        workers: number;
        nodes: Array<{
          name: string;
          state: string;
          requests_last_minute: number;
          credits_used: number;
        }>;
      };
    const before = await nodes();
    expect(before.workers).toBe(2);
    // Both workers' traffic, added up: every request once.
    expect(before.nodes).toEqual([
      expect.objectContaining({ name: 'n', state: 'up', requests_last_minute: 20 }),
    ]);
    const cordon = await fetch(`http://127.0.0.1:${admin}/admin/nodes/n/cordon`, {
      method: 'POST',
    });
    expect(cordon.status).toBe(200);
    const received = (await upstream.report()).arrivals.length;
    // Whichever worker takes them, nothing reaches the cordoned node (its only node: 502).
    const during = await Promise.all([1, 2, 3, 4, 5, 6].map((id) => post(url, 100 + id)));
    expect(during).toEqual([502, 502, 502, 502, 502, 502]);
    expect((await upstream.report()).arrivals.length).toBe(received);
    expect((await nodes()).nodes[0]!.state).toBe('cordoned');
    const health = (await (await fetch(`${url}/health`)).json()) as {
      nodes: Array<{ cordoned?: boolean }>;
    };
    expect(health.nodes[0]!.cordoned).toBe(true);
    await fetch(`http://127.0.0.1:${admin}/admin/nodes/n/uncordon`, { method: 'POST' });
    const after = await Promise.all([1, 2, 3, 4].map((id) => post(url, 200 + id)));
    expect(after).toEqual([200, 200, 200, 200]);
    expect(await proxy!.stop('SIGTERM')).toBe(0);
  });

  it('announces the proxy once both workers listen, at the port they took (--port 0)', async () => {
    temp = makeTempDir('cascade-workers-');
    const upstream = await recordingUpstream();
    writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
    writeFileSync(
      temp.path('config.toml'),
      `[server]\nhost = "127.0.0.1"\nport = 8545\n\n[[nodes]]\nname = "n"\nurl = "${upstream.url}"\n` +
        `tier = 0\nmonthly_limit = 0\nprovider_pricing_path = "prices.toml"\n`,
    );
    proxy = startCli(['serve', '--config', 'config.toml', '--workers', '2', '--port', '0'], {
      cwd: temp.dir,
    });
    const line = await proxy.waitFor(/workers share the port/);
    const { url, port } = JSON.parse(line) as { url: string; port: number };
    expect(port).toBeGreaterThan(0);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    // Both said they serve before it, so the port takes calls from that line on.
    const before = proxy.output().slice(0, proxy.output().indexOf(line));
    expect(before.match(/worker serving/g)).toHaveLength(2);
    const statuses = await Promise.all([1, 2, 3, 4].map((id) => post(url, id)));
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(await proxy.stop('SIGTERM')).toBe(0);
  });

  it('replaces a worker that crashed; its permits come back', async () => {
    const upstream = await recordingUpstream(150);
    const { url } = await startWorkers(upstream.url, 'max_concurrent = 4');
    const [victim] = workerPids(proxy!.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await proxy!.waitFor(/worker exited; restarting it/);
    await expect.poll(() => workerPids(proxy!.child.pid!).length).toBe(2);
    await expect
      .poll(async () => {
        const statuses = await Promise.all([1, 2, 3, 4].map((id) => post(url, id)));
        return statuses.every((s) => s === 200);
      })
      .toBe(true);
    expect((await upstream.report()).peak).toBeLessThanOrEqual(4);
    expect(await proxy!.stop('SIGTERM')).toBe(0);
  });

  it('never turns a counter back when a worker crashes', async () => {
    const upstream = await recordingUpstream();
    const { url } = await startWorkers(upstream.url, '');
    const forwarded = async (): Promise<number> => {
      const text = await (await fetch(`${url}/metrics`)).text();
      return Number(/^rpc_requests_total\{outcome="forwarded"\} (\d+)$/m.exec(text)?.[1]);
    };
    // New connections: both workers serve some of these.
    for (let i = 0; i < 20; i++) {
      const body = `{"jsonrpc":"2.0","id":${i},"method":"getSlot"}`;
      expect((await postOnNewConnection(url, body)).status).toBe(200);
    }
    expect(await forwarded()).toBe(20);
    const [victim] = workerPids(proxy!.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await proxy!.waitFor(/worker exited; restarting it/);
    await expect.poll(() => workerPids(proxy!.child.pid!).length).toBe(2);
    // The scrape (over a connection to the survivor) still counts what the dead one served.
    expect(await forwarded()).toBe(20);
  });
});
