/**
 * A client key's rps_limit, per_ip_rps and max_concurrent with replicas on one real Redis
 * (issue 27): each replica enforces a whole-number share of each limit, split by demand as a
 * node's limits are, the shares adding up to the limit; a replica that leaves gives its share
 * back. The replicas run on a clock whose `now` the test moves (syncs run on real timers), so a
 * key's buckets refill only when the test says: what a burst lets through is exactly the
 * shares in force, whatever the machine's speed.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MONOTONIC_CLOCK, type Clock } from '../../src/core/clock.js';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { nodeConfig, priceList } from '../support/node-config.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { startReplica, type Replica } from '../support/replicas.js';

const missing = redisUnavailable();
const WEB = 'ck_redis_limits_web_0123456789abcdef';
const BROWSER = 'ck_redis_limits_browser_0123456789ab';
const SLOW = 'ck_redis_limits_slow_0123456789abcde';
const KEYS = keysOf(
  clientKey('web', WEB, { rpsLimit: 30 }),
  clientKey('browser', BROWSER, { perIpRps: 9 }),
  clientKey('slow', SLOW, { maxConcurrent: 6 }),
);

let redis: RedisServer | undefined;
let mocks: MockNode[] = [];
let replicas: Replica[] = [];
let prefixCount = 0;
/** The replicas' monotonic time: moved by the test only. */
let now = 1_000_000;
const clock: Clock = { ...MONOTONIC_CLOCK, now: () => now };

beforeAll(() => {
  if (missing) console.warn(`skipping Redis key-limit tests: ${missing}`);
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.cascade.close()));
  replicas = [];
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
  await redis?.stop();
  redis = undefined;
});

async function fleet(count: number): Promise<MockNode> {
  redis = await startRedis();
  mocks = await startMockNodes([{ name: 'n' }]);
  const mock = mocks[0]!;
  const prefix = `kl${++prefixCount}`;
  const node = nodeConfig({
    name: 'n',
    url: mock.url,
    redactedUrl: mock.url,
    pricing: priceList({}, 1),
  });
  for (let i = 0; i < count; i++)
    replicas.push(
      await startReplica({
        id: `r${i}`,
        redisUrl: redis.url,
        nodes: [node],
        prefix,
        clock,
        keys: KEYS,
      }),
    );
  return mock;
}

async function status(replica: Replica, key: string): Promise<number> {
  const response = await fetch(`${replica.url}/${key}`, {
    method: 'POST',
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  });
  await response.text();
  return response.status;
}

function gauge(text: string, name: string, labels: string): number {
  const match = new RegExp(`^${name}${labels.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

/** Each replica's share of a key's limit, as its /metrics shows it. */
function shares(of: readonly Replica[], metric: string, key: string): Promise<number[]> {
  return Promise.all(of.map(async (r) => gauge(await r.metrics(), metric, `{node="key:${key}"}`)));
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/**
 * Calls `key` on the replicas in turn, `rounds` times each, the clock standing still: how many
 * each let through.
 */
async function burst(key: string, rounds: number): Promise<number[]> {
  const passed = replicas.map(() => 0);
  for (let round = 0; round < rounds; round++)
    for (const [i, replica] of replicas.entries())
      if ((await status(replica, key)) === 200) passed[i]!++;
  return passed;
}

describe.skipIf(missing !== undefined)("a key's rate and concurrency limits on replicas", () => {
  it('split rps_limit and max_concurrent into whole shares that add up to the limit', async () => {
    await fleet(3);
    await expect
      .poll(async () => sum(await shares(replicas, 'cascade_cluster_share_rps', 'web')))
      .toBe(30);
    await expect
      .poll(async () => sum(await shares(replicas, 'cascade_cluster_share_concurrency', 'slow')))
      .toBe(6);
    const web = await shares(replicas, 'cascade_cluster_share_rps', 'web');
    expect(web.every((share) => Number.isInteger(share) && share >= 1)).toBe(true);

    // A replica leaves: once its membership lapses its share goes to the others.
    const gone = replicas.pop()!;
    await gone.cascade.close();
    await expect
      .poll(async () => sum(await shares(replicas, 'cascade_cluster_share_rps', 'web')), {
        timeout: 15_000,
      })
      .toBe(30);
  });

  it('let through no more than rps_limit in a burst across the fleet (each its share)', async () => {
    await fleet(3);
    // Demand on every replica, then shares that agree: the limit, split.
    await burst(WEB, 2);
    await expect
      .poll(async () => sum(await shares(replicas, 'cascade_cluster_share_rps', 'web')))
      .toBe(30);
    const inForce = await shares(replicas, 'cascade_cluster_share_rps', 'web');
    now += 1000; // every bucket refills to its share, and no further
    const passed = await burst(WEB, 20);
    // Without shares each replica would let its own 30 through: 90. A share that moves during
    // the burst only shrinks a bucket (growing one needs time to refill, and time stands still).
    expect(sum(passed)).toBeLessThanOrEqual(30);
    expect(sum(passed)).toBeGreaterThanOrEqual(10);
    passed.forEach((count, i) => expect(count).toBeLessThanOrEqual(inForce[i]!));
  });

  it('give one address no more than per_ip_rps across the fleet', async () => {
    await fleet(3);
    await burst(BROWSER, 2);
    // The per-IP shares in force (not a metric): once they agree they add up to the limit.
    const perIp = () =>
      replicas.map((r) => r.cascade.server.keys.byName('browser')!.limits.share?.perIp ?? NaN);
    await expect.poll(() => sum(perIp())).toBe(9);
    now += 1000;
    const passed = await burst(BROWSER, 10);
    // Each replica gives the address its share of 9 (3 each when demand is even): 27 without.
    expect(sum(passed)).toBeLessThanOrEqual(9);
    expect(sum(passed)).toBeGreaterThanOrEqual(3);
  });

  it('hold no more than max_concurrent calls in flight across the fleet', async () => {
    const mock = await fleet(3);
    await expect
      .poll(async () => sum(await shares(replicas, 'cascade_cluster_share_concurrency', 'slow')))
      .toBe(6);
    mock.setBehaviour({ delayMs: 500 });
    const calls = replicas.flatMap((replica) =>
      Array.from({ length: 5 }, () => status(replica, SLOW)),
    );
    const statuses = await Promise.all(calls);
    // Without shares each replica would hold its own 6 (15 calls, all through).
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(6);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(9);
  });
});
