/**
 * Replicas sharing one set of limits and one usage per node through a real Redis.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MONOTONIC_CLOCK, type Clock } from '../../src/core/clock.js';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import { nodeConfig, priceList } from '../support/node-config.js';
import { rpc } from '../support/proxy-harness.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { startReplica, type Replica } from '../support/replicas.js';

const missing = redisUnavailable();
let redis: RedisServer | undefined;
let mocks: MockNode[] = [];
let replicas: Replica[] = [];
let prefixCount = 0;

beforeAll(() => {
  if (missing) console.warn(`skipping Redis cluster tests: ${missing}`);
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.cascade.close()));
  replicas = [];
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
  await redis?.stop();
  redis = undefined;
});

async function fleet(
  count: number,
  node: { rpsLimit?: number; maxConcurrent?: number; monthlyLimit?: number },
  clock?: Clock,
  keys?: Parameters<typeof startReplica>[0]['keys'],
): Promise<{ replicas: Replica[]; mock: MockNode }> {
  redis = await startRedis();
  mocks = await startMockNodes([{ name: 'n' }]);
  const mock = mocks[0]!;
  const prefix = `t${++prefixCount}`;
  const config = nodeConfig({
    name: 'n',
    url: mock.url,
    redactedUrl: mock.url,
    rpsLimit: node.rpsLimit ?? Infinity,
    maxConcurrent: node.maxConcurrent ?? Infinity,
    monthlyLimit: node.monthlyLimit,
    spilloverThreshold: node.monthlyLimit ?? Infinity,
    pricing: priceList({}, 1),
  });
  for (let i = 0; i < count; i++) {
    replicas.push(
      await startReplica({
        id: `r${i}`,
        redisUrl: redis.url,
        nodes: [config],
        prefix,
        clock,
        ...(keys ? { keys } : {}),
      }),
    );
  }
  return { replicas, mock };
}

function gauge(text: string, name: string, labels = ''): number {
  const match = new RegExp(`^${name}${labels.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : NaN;
}

async function post(replica: Replica, id: number): Promise<number> {
  const response = await fetch(replica.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpc('getSlot', id)),
  });
  await response.text();
  return response.status;
}

describe.skipIf(missing !== undefined)('replicas through Redis', () => {
  it('split each node’s rps limit between them, in whole shares within the limit', async () => {
    const { replicas } = await fleet(3, { rpsLimit: 100, maxConcurrent: 10 });
    for (const replica of replicas)
      await expect
        .poll(async () => gauge(await replica.metrics(), 'cascade_cluster_members'))
        .toBe(3);
    const sharesOf = (name: string): Promise<number[]> =>
      Promise.all(replicas.map(async (r) => gauge(await r.metrics(), name, '{node="n"}')));
    // While the third replica joins, one that has not synced since may briefly hold its
    // two-member share (the documented bound: one sync interval's lag); once every replica has
    // seen all three, the shares in force add up to exactly the limit.
    await expect.poll(async () => sum(await sharesOf('cascade_cluster_share_rps'))).toBe(100);
    const shares = await sharesOf('cascade_cluster_share_rps');
    expect(shares.every((s) => Number.isInteger(s) && s > 0)).toBe(true);
    await expect
      .poll(async () => sum(await sharesOf('cascade_cluster_share_concurrency')))
      .toBe(10);
    // Redis was there all along: no replica warned of a lost lease on its way up.
    for (const replica of replicas) expect(replica.logs.join('')).not.toContain('past the lease');
  });

  it('share one usage per node: every replica sees the fleet’s credits', async () => {
    const { replicas, mock } = await fleet(2, {});
    for (let i = 0; i < 5; i++) expect(await post(replicas[0]!, i)).toBe(200);
    for (let i = 0; i < 3; i++) expect(await post(replicas[1]!, i)).toBe(200);
    expect(mock.stats().requests).toBe(8);
    await expect.poll(() => replicas.map((r) => r.used('n'))).toEqual([8, 8]);
    expect(redis!.cli('GET', `t${prefixCount}:usage:n:${currentPeriod()}`)).toBe('8');
  });

  it('enforce one client-key budget: the call that would pass it is refused on every replica', async () => {
    const secret = 'ck_fleet_budget_0123456789abcdefghij';
    const keys = keysOf(clientKey('app', secret, { monthlyCredits: 6 }));
    const { replicas, mock } = await fleet(3, {}, undefined, keys);
    const keyed = (replica: Replica) => ({ ...replica, url: `${replica.url}/${secret}` });
    const used = () => replicas.map((r) => r.cascade.server.keys.byName('app')!.usage().used);
    for (const [at, replica] of replicas.entries()) {
      for (let i = 0; i < 2; i++) expect(await post(keyed(replica), i)).toBe(200);
      // The event, not a sleep: every replica has heard of the fleet's calls so far.
      await expect.poll(used).toEqual([2 * (at + 1), 2 * (at + 1), 2 * (at + 1)]);
    }
    for (const replica of replicas) expect(await post(keyed(replica), 9)).toBe(429);
    expect(mock.stats().requests).toBe(6);
    expect(redis!.cli('GET', `t${prefixCount}:usage:key%3Aapp:${currentPeriod()}`)).toBe('6');
  });

  it('keep serving while Redis is down, and heal its lost usage when it returns empty', async () => {
    const { replicas, mock } = await fleet(2, {});
    for (let i = 0; i < 4; i++) expect(await post(replicas[0]!, i)).toBe(200);
    await expect.poll(() => replicas[1]!.used('n')).toBe(4);
    await redis!.kill();
    for (let i = 0; i < 3; i++) expect(await post(replicas[1]!, i)).toBe(200);
    await expect
      .poll(async () => gauge(await replicas[1]!.metrics(), 'cascade_cluster_redis_up'))
      .toBe(0);
    await redis!.start(); // empty: everything Redis knew is gone
    await expect.poll(() => replicas.map((r) => r.used('n'))).toEqual([7, 7]);
    expect(mock.stats().requests).toBe(7);
  });

  it('switch every replica to the new period’s key at the billing boundary', async () => {
    let wall = Date.UTC(2026, 0, 31, 23, 59, 59);
    const clock: Clock = { ...MONOTONIC_CLOCK, wallNow: () => wall };
    const { replicas } = await fleet(3, {}, clock);
    for (const [i, replica] of replicas.entries()) expect(await post(replica, i)).toBe(200);
    await expect.poll(() => replicas.map((r) => r.used('n'))).toEqual([3, 3, 3]);
    wall = Date.UTC(2026, 1, 1, 0, 0, 1);
    await expect
      .poll(() => replicas.map((r) => r.cascade.server.topology.node('n')!.usage.used))
      .toEqual([0, 0, 0]);
    expect(await post(replicas[2]!, 9)).toBe(200);
    await expect.poll(() => replicas.map((r) => r.used('n'))).toEqual([1, 1, 1]);
    const keys = redis!.cli('KEYS', `t${prefixCount}:usage:*`).split('\n').sort();
    expect(keys).toEqual([
      `t${prefixCount}:usage:n:2026-01-01`,
      `t${prefixCount}:usage:n:2026-02-01`,
    ]);
    expect(redis!.cli('GET', `t${prefixCount}:usage:n:2026-02-01`)).toBe('1');
  });

  it('write usage at shutdown; what Redis never acknowledged is kept as unsent', async () => {
    const { replicas } = await fleet(1, {});
    await redis!.kill();
    for (let i = 0; i < 2; i++) expect(await post(replicas[0]!, i)).toBe(200);
    const replica = replicas.pop()!;
    await replica.cascade.close();
    const file = JSON.parse(readFileSync(replica.cascade.quotasPath, 'utf8')) as Record<
      string,
      { used: number; unsent?: number }
    >;
    expect(file.n).toMatchObject({ used: 2, unsent: 2 });
  });
});

/** The billing period (reset day 1) of today, as the usage key names it. */
function currentPeriod(): string {
  const now = new Date();
  return `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
