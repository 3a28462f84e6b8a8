/**
 * A provider account shared by replicas through a real Redis (issue 28), with an injected
 * wall clock: every replica sees the fleet's pool, and on the account's own reset_day every
 * replica switches the pool — not its node — to the new period's key. What Redis never
 * acknowledged of the pool is kept as `unsent` in quotas.json, as a node's is.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MONOTONIC_CLOCK, type Clock } from '../../src/core/clock.js';
import type { AccountConfig } from '../../src/core/config/types.js';
import { startMockNodes, type MockNode } from '../../src/mock/index.js';
import { nodeConfig, priceList } from '../support/node-config.js';
import { rpc } from '../support/proxy-harness.js';
import { redisUnavailable, startRedis, type RedisServer } from '../support/redis-server.js';
import { startReplica, type Replica } from '../support/replicas.js';

const missing = redisUnavailable();
let redis: RedisServer | undefined;
let mocks: MockNode[] = [];
let replicas: Replica[] = [];

beforeAll(() => {
  if (missing) console.warn(`skipping Redis account tests: ${missing}`);
});

afterEach(async () => {
  await Promise.all(replicas.map((r) => r.cascade.close()));
  replicas = [];
  await Promise.all(mocks.map((m) => m.close()));
  mocks = [];
  await redis?.stop();
  redis = undefined;
});

/** Resets on the 15th; its node on the 1st. */
const ACCOUNT: AccountConfig = {
  name: 'shared',
  monthlyLimit: 1000,
  resetDay: 15,
  rpsLimit: Infinity,
  maxConcurrent: Infinity,
  spilloverPercent: 100,
  spilloverThreshold: 1000,
};

function billedNode(url: string) {
  return nodeConfig({
    name: 'n',
    url,
    redactedUrl: url,
    account: 'shared',
    pricing: priceList({}, 1),
  });
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

describe.skipIf(missing !== undefined)('a provider account shared through Redis', () => {
  it('rolls over on its own reset_day on every replica; its node keeps its period', async () => {
    let wall = Date.UTC(2026, 7, 14, 23, 59, 59);
    const clock: Clock = { ...MONOTONIC_CLOCK, wallNow: () => wall };
    redis = await startRedis();
    mocks = await startMockNodes([{ name: 'n' }]);
    const node = billedNode(mocks[0]!.url);
    for (let i = 0; i < 3; i++)
      replicas.push(
        await startReplica({
          id: `r${i}`,
          redisUrl: redis.url,
          nodes: [node],
          accounts: [ACCOUNT],
          prefix: 'pa',
          clock,
        }),
      );
    const pools = () =>
      replicas.map((r) => r.cascade.server.topology.account('shared')!.usage.used);
    for (const [i, replica] of replicas.entries()) expect(await post(replica, i)).toBe(200);
    // One pool: every replica hears of the fleet's three calls.
    await expect.poll(pools).toEqual([3, 3, 3]);
    wall = Date.UTC(2026, 7, 15, 0, 0, 1);
    await expect.poll(pools).toEqual([0, 0, 0]);
    expect(replicas.map((r) => r.used('n'))).toEqual([3, 3, 3]);
    expect(await post(replicas[1]!, 9)).toBe(200);
    await expect.poll(pools).toEqual([1, 1, 1]);
    await expect.poll(() => replicas.map((r) => r.used('n'))).toEqual([4, 4, 4]);
    expect(redis.cli('KEYS', 'pa:usage:*').split('\n').sort()).toEqual([
      'pa:usage:account%3Ashared:2026-07-15',
      'pa:usage:account%3Ashared:2026-08-15',
      'pa:usage:n:2026-08-01',
    ]);
    expect(redis.cli('GET', 'pa:usage:account%3Ashared:2026-08-15')).toBe('1');
    expect(redis.cli('GET', 'pa:usage:n:2026-08-01')).toBe('4');
  });

  it('writes the pool at shutdown; what Redis never acknowledged is kept as unsent', async () => {
    redis = await startRedis();
    mocks = await startMockNodes([{ name: 'n' }]);
    const replica = await startReplica({
      id: 'r0',
      redisUrl: redis.url,
      nodes: [billedNode(mocks[0]!.url)],
      accounts: [ACCOUNT],
      prefix: 'pu',
    });
    replicas.push(replica);
    await redis.kill();
    for (let i = 0; i < 2; i++) expect(await post(replica, i)).toBe(200);
    await replica.cascade.close();
    const file = JSON.parse(readFileSync(replica.cascade.quotasPath, 'utf8')) as Record<
      string,
      { used: number; unsent?: number }
    >;
    expect(file['account:shared']).toMatchObject({ used: 2, unsent: 2 });
    expect(file.n).toMatchObject({ used: 2, unsent: 2 });
  });
});
