/**
 * Three `cascade serve` processes, one Redis: one rate limit and one usage toward a provider,
 * through skewed load, a replica killed, Redis restarted empty and Redis cut off.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli } from '../support/cli-process.js';
import { makeTempDir, type TempDir } from '../support/temp-dir.js';
import { startCli, type CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { recordingUpstream, stopRecordingUpstreams } from '../support/recording-upstream.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { busiestWindow } from '../support/arrivals.js';

const missing = redisUnavailable();
let temp: TempDir | undefined;
let redis: RedisServer | undefined;
let relay: TcpProxy | undefined;
let replicas: Replica[] = [];

interface Replica {
  readonly process: CliProcess;
  readonly url: string;
  readonly quotas: string;
}

beforeAll(() => {
  assertBuilt();
  if (missing) console.warn(`skipping replica tests: ${missing}`);
});

afterEach(async () => {
  const running = replicas.filter((r) => r.process.child.exitCode === null);
  await Promise.all(running.map((r) => r.process.stop('SIGKILL')));
  replicas = [];
  stopRecordingUpstreams();
  await relay?.close();
  relay = undefined;
  await redis?.stop();
  redis = undefined;
  temp?.cleanup();
});

async function startFleet(
  upstream: string,
  node: string,
  redisPort: number,
  server = '',
): Promise<Replica[]> {
  temp = makeTempDir('cascade-replicas-');
  writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
  const started: Replica[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    writeFileSync(
      temp.path(`r${i}.toml`),
      `[server]\nhost = "127.0.0.1"\nport = ${port}\nenable_metrics = true\nquotas_path = "r${i}.json"\n${server}\n` +
        `[cluster]\nredis_url = "redis://127.0.0.1:${redisPort}"\nkey_prefix = "e2e"\nreplica_id = "r${i}"\n` +
        `sync_interval_ms = 50\nlease_ttl_ms = 1000\n\n` +
        // Every request must reach the node: the limits are what is measured, not coalescing.
        `[cache]\nenabled = false\ncoalesce = false\n\n` +
        `[[nodes]]\nname = "n"\nurl = "${upstream}"\ntier = 0\nmonthly_limit = 0\n` +
        `provider_pricing_path = "prices.toml"\n${node}\n`,
    );
    const process = startCli(['serve', '--config', `r${i}.toml`], { cwd: temp.dir });
    started.push({ process, url: `http://127.0.0.1:${port}`, quotas: temp.path(`r${i}.json`) });
  }
  await Promise.all(started.map((r) => r.process.waitFor(/cascade serving/)));
  replicas = started;
  return started;
}

function post(url: string): Promise<number> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  }).then(
    async (response) => {
      await response.text();
      return response.status;
    },
    () => 0,
  );
}

/** Sends `perTick[i]` requests to replica i every 100 ms for `ticks`; `at(tick)` runs chaos. */
async function drive(
  fleet: readonly Replica[],
  perTick: readonly number[],
  ticks: number,
  at: (tick: number) => Promise<void> | void = () => undefined,
): Promise<number[][]> {
  const statuses: Array<Array<Promise<number>>> = fleet.map(() => []);
  for (let tick = 0; tick < ticks; tick++) {
    await at(tick);
    fleet.forEach((replica, i) => {
      if (replica.process.child.exitCode !== null || replica.process.child.signalCode !== null)
        return;
      for (let k = 0; k < perTick[i]!; k++) statuses[i]!.push(post(replica.url));
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Promise.all(statuses.map((list) => Promise.all(list)));
}

const usageIn = (file: string): number =>
  (JSON.parse(readFileSync(file, 'utf8')) as Record<string, { used: number }>).n!.used;

describe.skipIf(missing !== undefined)(
  'three replicas sharing one Redis',
  { timeout: 180_000 },
  () => {
    it('hold a 50 rps node to its limit under 70/20/10 load, use it fully, and agree on usage', async () => {
      redis = await startRedis();
      const upstream = await recordingUpstream();
      const fleet = await startFleet(upstream.url, 'rps_limit = 50', redis.port);
      // 150 req/s wanted (three times the limit: a modest rate any machine sustains), skewed
      // 73/20/7, for 6 s.
      await drive(fleet, [11, 3, 1], 60);
      const { arrivals } = await upstream.report();
      expect(busiestWindow(arrivals, 1000)).toBeLessThanOrEqual(50 + 50);
      // Shares follow demand: after a second to settle, the fleet keeps the node ≥ 90 % busy
      // (over its best 4 s: a machine too busy to run the replicas for a moment cannot use
      // the tokens of that moment, whatever the shares).
      const start = Math.min(...arrivals);
      const settled = arrivals.filter((t) => t >= start + 1000);
      expect(busiestWindow(settled, 4000)).toBeGreaterThanOrEqual(0.9 * 50 * 4);
      // A replica that stops first writes the total it last heard from Redis: wait until every
      // replica's last booking has been synced (the event, not a sleep), then stop them all.
      await expect
        .poll(() => Number(redis!.cli('GET', `e2e:usage:n:${period()}`)))
        .toBe(arrivals.length);
      for (const replica of fleet) expect(await replica.process.stop('SIGTERM')).toBe(0);
      expect(Number(redis.cli('GET', `e2e:usage:n:${period()}`))).toBe(arrivals.length);
      for (const replica of fleet) expect(usageIn(replica.quotas)).toBe(arrivals.length);
    });

    it('serve on through a replica killed, Redis restarted empty and Redis cut off', async () => {
      redis = await startRedis();
      relay = await startTcpProxy(redis.port);
      const upstream = await recordingUpstream();
      // Budgets no busy machine can exhaust: a 5xx here may only come from the chaos.
      const fleet = await startFleet(
        upstream.url,
        'rps_limit = 300',
        relay.port,
        'request_timeout_ms = 30000\nattempt_timeout_ms = 15000\n',
      );
      const statuses = await drive(fleet, [7, 2, 1], 80, async (tick) => {
        if (tick === 10) fleet[2]!.process.child.kill('SIGKILL');
        if (tick === 25) await redis!.restart();
        if (tick === 40) relay!.blackhole();
        if (tick === 60) relay!.restore();
      });
      // Demand (100 rps) stays under the limit: none of this may reach a client as a 5xx.
      for (const list of statuses.slice(0, 2)) expect(list.filter((s) => s !== 200)).toEqual([]);
      const { arrivals } = await upstream.report();
      expect(busiestWindow(arrivals, 1000)).toBeLessThanOrEqual(300 + 300);
      // Usage converges once Redis is back: both survivors agree with Redis, and Redis holds
      // at least what the node received — what the killed replica booked and never sent is
      // covered by the reserve it held, counted once its heartbeat expired — and at most that
      // plus its reserve (twice its busiest sync interval's bookings; bounded here by twice all
      // it ever sent).
      const key = `e2e:usage:n:${period()}`;
      const killedSent = statuses[2]!.length;
      await expect
        .poll(() => Number(redis!.cli('GET', key)))
        .toBeGreaterThanOrEqual(arrivals.length);
      for (const replica of fleet.slice(0, 2))
        expect(await replica.process.stop('SIGTERM')).toBe(0);
      const total = Number(redis.cli('GET', key));
      expect(total).toBeGreaterThanOrEqual(arrivals.length);
      expect(total).toBeLessThanOrEqual(arrivals.length + 2 * killedSent);
      expect(usageIn(fleet[0]!.quotas)).toBe(total);
      expect(usageIn(fleet[1]!.quotas)).toBe(total);
    });
  },
);

describe.skipIf(missing !== undefined)('cascade quota with replicas', () => {
  it('shows and resets the fleet’s usage in Redis when no server runs here', async () => {
    redis = await startRedis();
    temp = makeTempDir('cascade-quota-redis-');
    writeFileSync(temp.path('prices.toml'), '[routing]\n[limits]\nunknown_method_cost = 1\n');
    writeFileSync(
      temp.path('config.toml'),
      `[server]\nhost = "127.0.0.1"\nport = 0\n\n[cluster]\nredis_url = "redis://127.0.0.1:${redis.port}"\nkey_prefix = "q"\n\n` +
        `[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:9"\ntier = 0\nmonthly_limit = 1000\nprovider_pricing_path = "prices.toml"\n`,
    );
    redis.cli('SET', `q:usage:n:${period()}`, '420');
    const show = await runCli(['quota', 'show', '--json', '--config', 'config.toml'], {
      cwd: temp.dir,
    });
    expect(show.code).toBe(0);
    const shown = JSON.parse(show.stdout) as {
      source: string;
      nodes: Array<{ name: string; used: number }>;
    };
    expect(shown.source).toBe('redis');
    expect(shown.nodes[0]).toMatchObject({ name: 'n', used: 420 });
    const reset = await runCli(['quota', 'reset', 'n', '--config', 'config.toml'], {
      cwd: temp.dir,
    });
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('for every replica (in Redis)');
    expect(redis.cli('GET', `q:usage:n:${period()}`)).toBe('');
    expect(redis.cli('GET', `q:epoch:n:${period()}`)).toBe('1');
  });
});

function period(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}
