/**
 * A client key's `monthly_credits` shared by replicas through Redis (issues 27, 30): each
 * "replica" is the real ClientKeys, SharedUsageLedger and RedisCoordinator on a ManualClock,
 * its key's usage one more counter beside a node's, so the test decides who syncs when —
 * against a real redis-server.
 */
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { coordinatedNodes } from '../../src/core/cluster/coordinated-nodes.js';
import { RedisCoordinator, type ShareTarget } from '../../src/core/cluster/redis-coordinator.js';
import { readSharedUsage } from '../../src/core/cluster/shared-quota.js';
import type { ClusterConfig, Config, NodeConfig } from '../../src/core/config/types.js';
import { keyRowsFromSnapshot } from '../../src/commands/quota-keys.js';
import { ClientKeys } from '../../src/core/keys/client-keys.js';
import { keyPeriods } from '../../src/core/keys/key-periods.js';
import type { KeyState } from '../../src/core/keys/key-state.js';
import { periodStart } from '../../src/core/quota/billing-period.js';
import { SharedUsageLedger } from '../../src/core/quota/shared-usage-ledger.js';
import { clientKey, keysOf } from '../support/client-keys.js';
import {
  redisUnavailable,
  startRedis,
  type RedisServer,
  replicaCluster,
} from '../support/redis-server.js';
import { steppedStore } from '../support/stepped-sync.js';

const missing = redisUnavailable();
const INTERVAL = 50;
const MAX_TRIES = 100;
const WALL = Date.UTC(2026, 0, 15, 12);
const BUDGET = 20;
const KEYS = keysOf(
  clientKey('app', 'ck_redis_budget_0123456789abcdefghij', {
    monthlyCredits: BUDGET,
    resetDay: 1,
  }),
);
const PERIOD = periodStart(new Date(WALL), 1);

let redis: RedisServer | undefined;
let members: Replica[] = [];
let prefixCount = 0;

beforeAll(() => {
  if (missing) console.warn(`skipping Redis key budget tests: ${missing}`);
});

afterEach(async () => {
  for (const replica of members) replica.crash();
  members = [];
  await redis?.stop();
  redis = undefined;
});

interface Replica {
  readonly key: KeyState;
  readonly keys: ClientKeys;
  /** One call at 1 credit: true when the key's budget let it through. */
  call(): boolean;
  sync(): Promise<void>;
  trySync(): Promise<boolean>;
  crash(): void;
}

function clusterConfig(id: string, prefix: string): ClusterConfig {
  return replicaCluster(redis!, id, prefix, INTERVAL);
}

async function replica(id: string, prefix: string): Promise<Replica> {
  const cluster = clusterConfig(id, prefix);
  const clock = new ManualClock(0, WALL);
  const ledger = new SharedUsageLedger();
  const keys = new ClientKeys(KEYS, true, clock, () => clock.wallNow());
  const { store, trySync } = await steppedStore(cluster, clock);
  // The service's target: no nodes here, the key's counter synced as one (no limits).
  const nodes: NodeConfig[] = [];
  const counted = keyPeriods(keys.list().map((state) => state.config));
  const target: ShareTarget = {
    nodes: () => coordinatedNodes(nodes, ledger, clock.wallNow(), () => undefined, counted),
    takeDemand: () => ({ rps: 0, concurrent: 0 }),
    applyShare: () => undefined,
  };
  const coordinator = new RedisCoordinator(
    store,
    cluster,
    target,
    ledger,
    clock,
    pino({ level: 'silent' }),
  );
  keys.shareUsage(ledger, (name) => coordinator.reset([name]));
  await coordinator.start();
  const key = keys.byName('app')!;
  let crashed = false;
  const self: Replica = {
    key,
    keys,
    call() {
      if (key.admit('getSlot', '127.0.0.1', undefined, clock.now(), 1) !== undefined) return false;
      key.settle(1, 1);
      return true;
    },
    trySync,
    async sync() {
      for (let i = 0; i < MAX_TRIES; i++) {
        if (await trySync()) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`${id}: Redis never answered`);
    },
    crash() {
      if (crashed) return;
      crashed = true;
      store.close();
    },
  };
  members.push(self);
  return self;
}

/** The fleet's total for key app in Redis (the store escapes the name's ':'). */
function stored(prefix: string): number {
  return Number(redis!.cli('GET', `${prefix}:usage:key%3Aapp:${PERIOD}`) || '0');
}

describe.skipIf(missing !== undefined)("a key's monthly budget, shared by replicas", () => {
  it('three replicas enforce one budget: the call that would pass it is refused on each', async () => {
    redis = await startRedis();
    const prefix = `kb${++prefixCount}`;
    const fleet = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    let passed = 0;
    // Round robin, every replica synced between calls: the fleet keeps to one budget.
    for (let round = 0; round < BUDGET; round++) {
      const at = fleet[round % 3]!;
      if (at.call()) passed++;
      for (const each of fleet) await each.sync();
    }
    // One more round: a replica that synced before the last call's replica hears of it now.
    for (const each of fleet) await each.sync();
    expect(passed).toBe(BUDGET);
    expect(stored(prefix)).toBe(BUDGET);
    for (const each of fleet) {
      expect(each.key.usage().used).toBe(BUDGET);
      expect(each.call()).toBe(false);
    }
    // `cascade quota show` with no server on this machine reads the key's fleet total too.
    const config = { nodes: [], keys: KEYS, cluster: clusterConfig('cli', prefix) };
    const usage = await readSharedUsage(config as unknown as Config, new Date(WALL));
    const [row] = keyRowsFromSnapshot(config as unknown as Config, usage);
    expect(usage.get('key:app')).toEqual({ used: BUDGET, periodStart: PERIOD });
    expect(row!.name).toBe('app');
  });

  it('between syncs the fleet passes the budget by at most what the others booked since', async () => {
    redis = await startRedis();
    const prefix = `kb${++prefixCount}`;
    const fleet = [
      await replica('a', prefix),
      await replica('b', prefix),
      await replica('c', prefix),
    ];
    let passed = 0;
    // Each replica books 3 calls between syncs: it cannot see the others' 6 until it syncs.
    for (let round = 0; round < 10; round++) {
      for (const each of fleet) for (let i = 0; i < 3; i++) if (each.call()) passed++;
      for (const each of fleet) await each.sync();
    }
    expect(passed).toBeGreaterThanOrEqual(BUDGET);
    expect(passed).toBeLessThanOrEqual(BUDGET + 2 * 3);
    await fleet[0]!.sync();
    expect(stored(prefix)).toBe(passed);
    for (const each of fleet) expect(each.call()).toBe(false);
  });

  it('Redis restarted empty: the key total heals by the nodes’ rule', async () => {
    redis = await startRedis();
    const prefix = `kb${++prefixCount}`;
    const a = await replica('a', prefix);
    const b = await replica('b', prefix);
    for (let i = 0; i < 6; i++) a.call();
    await a.sync();
    for (let i = 0; i < 4; i++) b.call();
    await b.sync();
    await a.sync(); // both saw 10
    await redis.kill();
    a.call();
    b.call();
    expect(await a.trySync()).toBe(false);
    await redis.start(); // empty
    await a.sync();
    await b.sync();
    await a.sync();
    expect(stored(prefix)).toBe(12);
    expect([a.key.usage().used, b.key.usage().used]).toEqual([12, 12]);
  });

  it('quota reset --key zeroes the fleet’s total on every replica', async () => {
    redis = await startRedis();
    const prefix = `kb${++prefixCount}`;
    const a = await replica('a', prefix);
    const b = await replica('b', prefix);
    for (let i = 0; i < BUDGET; i++) a.call();
    await a.sync();
    await b.sync();
    expect(b.call()).toBe(false);
    await b.keys.resetUsage(b.key);
    await a.sync();
    await b.sync();
    expect([a.key.usage().used, b.key.usage().used]).toEqual([0, 0]);
    expect(a.call()).toBe(true);
  });
});
