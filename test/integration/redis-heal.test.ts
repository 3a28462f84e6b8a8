/**
 * How the fleet's usage heals when Redis loses data, step by step: each "replica" is the real
 * RedisCoordinator and SharedUsageLedger on a ManualClock, so the test decides which replica
 * syncs when — the order that made usage disappear (issue 30) is played on purpose, every time,
 * against a real redis-server.
 */
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { ClusterConfig } from '../../src/core/config/types.js';
import { RedisCoordinator, type ShareTarget } from '../../src/core/cluster/redis-coordinator.js';
import { RedisStore, whenConnected } from '../../src/core/cluster/redis-store.js';
import { SharedUsageLedger } from '../../src/core/quota/shared-usage-ledger.js';
import type { QuotaEntry } from '../../src/core/quota/usage-ledger.js';
import {
  redisUnavailable,
  startRedis,
  type RedisServer,
  replicaCluster,
} from '../support/redis-server.js';
import { steppedStore } from '../support/stepped-sync.js';

const missing = redisUnavailable();
const PERIOD = '2026-01-01';
const INTERVAL = 50;
/** Sync attempts a step makes before giving up (Redis reconnecting backs off up to 1 s). */
const MAX_TRIES = 100;

let redis: RedisServer | undefined;
let members: Member[] = [];
let prefixCount = 0;

beforeAll(() => {
  if (missing) console.warn(`skipping Redis heal tests: ${missing}`);
});

afterEach(async () => {
  for (const member of members) member.crash();
  members = [];
  await redis?.stop();
  redis = undefined;
});

/** One replica, driven by hand. */
interface Member {
  readonly ledger: SharedUsageLedger;
  /** Books `credits` as requests would (the node "saw" them). */
  book(credits: number): void;
  /** Runs syncs until one reaches Redis. */
  sync(): Promise<void>;
  /** One sync attempt (after `ms`, one interval by default); false when Redis did not answer. */
  trySync(ms?: number): Promise<boolean>;
  /** SIGTERM: the final sync, as `cascade` does it. */
  stop(): Promise<void>;
  /** kill -9: nothing more is sent. */
  crash(): void;
}

function clusterConfig(id: string, prefix: string): ClusterConfig {
  return replicaCluster(redis!, id, prefix, INTERVAL);
}

async function member(id: string, prefix: string, restored?: QuotaEntry): Promise<Member> {
  const cluster = clusterConfig(id, prefix);
  const clock = new ManualClock(0, Date.UTC(2026, 0, 15));
  const ledger = new SharedUsageLedger();
  ledger.setPeriodStart('n', PERIOD);
  if (restored) ledger.restore('n', restored);
  const { store, trySync } = await steppedStore(cluster, clock);
  const target: ShareTarget = {
    nodes: () => [{ name: 'n', rpsLimit: Infinity, concurrentLimit: Infinity, period: PERIOD }],
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
  await coordinator.start();
  let crashed = false;
  const self: Member = {
    ledger,
    book: (credits) => ledger.counter('n').add(credits),
    trySync,
    async sync() {
      for (let i = 0; i < MAX_TRIES; i++) {
        if (await trySync()) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`${id}: Redis never answered`);
    },
    async stop() {
      await coordinator.stop();
      crashed = true;
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

/** What Redis holds for node n. */
function stored(prefix: string): number {
  return Number(redis!.cli('GET', `${prefix}:usage:n:${PERIOD}`) || '0');
}

describe.skipIf(missing !== undefined)('a usage total Redis lost heals', () => {
  it('restarted empty: every delta counts, whichever replica syncs first (issue 30)', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    a.book(10);
    await a.sync();
    b.book(5);
    await b.sync(); // Redis: 15; a last saw 10, b saw 15
    await redis.kill();
    a.book(7);
    b.book(3);
    expect(await a.trySync()).toBe(false);
    await redis.start(); // empty
    // The replica that saw the lower total reconnects first: its delta must survive b's heal.
    await a.sync();
    await b.sync();
    expect(stored(prefix)).toBe(25);
    await a.sync();
    expect([a.ledger.counter('n').used, b.ledger.counter('n').used]).toEqual([25, 25]);
  });

  it('where Redis refuses INFO in scripts, an empty restart heals the same', async () => {
    redis = await startRedis(['--rename-command', 'INFO', '']);
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    a.book(10);
    await a.sync();
    b.book(5);
    await b.sync();
    await redis.kill();
    a.book(7);
    b.book(3);
    await redis.start();
    await a.sync();
    await b.sync();
    expect(stored(prefix)).toBe(25);
  });

  it('restarted empty twice, and then from the other side first', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    let truth = 0;
    for (const [first, second] of [
      [a, b],
      [b, a],
      [a, b],
    ] as const) {
      second.book(4);
      await second.sync();
      first.book(6);
      await first.sync(); // first saw the higher total
      await redis.kill();
      first.book(2);
      second.book(1);
      await redis.start();
      await second.sync();
      await first.sync();
      truth += 13;
      expect(stored(prefix)).toBe(truth);
    }
  });

  it('restarted from an older snapshot: what happened since it is healed, once', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    a.book(10);
    await a.sync();
    b.book(5);
    await b.sync();
    redis.snapshot(); // 15
    a.book(4);
    await a.sync();
    b.book(2);
    await b.sync(); // 21
    await redis.kill();
    a.book(1);
    b.book(1);
    await redis.start({ fromSnapshot: true });
    expect(stored(prefix)).toBe(15);
    await a.sync();
    await b.sync();
    expect(stored(prefix)).toBe(23);
  });

  it('restarted empty after a quota reset: the reset’s epoch is healed with the total', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    a.book(50);
    await a.sync();
    redis.cli(
      'EVAL',
      `redis.call('DEL', KEYS[1]) return redis.call('INCR', KEYS[2])`,
      '2',
      `${prefix}:usage:n:${PERIOD}`,
      `${prefix}:epoch:n:${PERIOD}`,
    );
    await a.sync();
    await b.sync();
    expect([a.ledger.epoch('n'), b.ledger.epoch('n')]).toEqual([1, 1]);
    a.book(3);
    await a.sync();
    b.book(2);
    await b.sync(); // 5 in epoch 1
    await redis.kill();
    a.book(1);
    await redis.start();
    await a.sync();
    await b.sync();
    expect(stored(prefix)).toBe(6);
    await a.sync();
    expect([a.ledger.counter('n').used, a.ledger.epoch('n')]).toEqual([6, 1]);
  });

  it('a replica restarted from quotas.json heals an empty Redis, and adds nothing to a full one', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    a.book(8);
    await a.sync();
    // b ran before, stopped; its file says the fleet had 8, 2 of them its own and unsent.
    const b = await member('b', prefix, { used: 8, periodStart: PERIOD, unsent: 2 });
    await b.sync();
    expect(stored(prefix)).toBe(10);
    await redis.kill();
    await redis.start();
    const c = await member('c', prefix, { used: 10, periodStart: PERIOD });
    a.book(1);
    await a.sync();
    await c.sync();
    await b.sync();
    expect(stored(prefix)).toBe(11);
  });

  it('SIGTERM hands over the last usage and releases the reserve: exact', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    a.book(3);
    await a.sync();
    a.book(2);
    b.book(4);
    await b.sync();
    expect(reserves(prefix)).toEqual({ a: 6, b: 8 });
    await a.stop();
    await b.stop();
    expect(stored(prefix)).toBe(9);
    expect(reserves(prefix)).toEqual({});
  });

  it('kill -9: what the replica booked and never sent counts, rounded up to its reserve', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    const b = await member('b', prefix);
    a.book(6);
    await a.sync(); // a holds 12 ahead
    a.book(4); // the node saw 10; Redis has 6
    a.crash();
    const reader = await RedisStore.connect(clusterConfig('reader', prefix), () => undefined);
    expect(await whenConnected(reader, 5000)).toBe(true);
    // Once a's heartbeat has expired (the lease, in Redis's time), its reserve counts.
    await until(async () => (await reader.read([{ name: 'n', period: PERIOD }]))[0] === 18);
    reader.close();
    await until(async () => {
      await b.sync();
      return stored(prefix) === 18;
    });
    expect(Object.keys(reserves(prefix))).not.toContain('a');
  });

  it('a jump from idle to full load: early syncs double the reserve, so a kill -9 stays covered', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    // Idle, the reserve is 0 and the first credit asks for a sync: it runs at once, with no
    // time passing (a timed sync would come only after a whole interval).
    a.book(10);
    expect(await a.trySync(0)).toBe(true);
    expect([stored(prefix), reserves(prefix)]).toEqual([10, { a: 20 }]);
    // Booking half the reserve asks again; an early sync at least doubles the reserve.
    a.book(10);
    expect(await a.trySync(0)).toBe(true);
    expect([stored(prefix), reserves(prefix)]).toEqual([20, { a: 40 }]);
    a.book(20);
    expect(await a.trySync(0)).toBe(true);
    expect([stored(prefix), reserves(prefix)]).toEqual([40, { a: 80 }]);
    // Below half of it nothing asks: no sync until the timer's.
    a.book(39);
    await expect(a.trySync(0)).rejects.toThrow('did not sync');
    // Killed now: the node saw 79; Redis holds 40 and the reserve, 80, counted once the
    // replica is back under its name.
    a.crash();
    const again = await member('a', prefix, { used: 40, periodStart: PERIOD });
    await again.sync();
    expect(stored(prefix)).toBe(120);
    expect(stored(prefix)).toBeGreaterThanOrEqual(79);
  });

  it('a replica restarted under the same name counts its earlier self’s reserve at once', async () => {
    redis = await startRedis();
    const prefix = `h${++prefixCount}`;
    const a = await member('a', prefix);
    a.book(5);
    await a.sync();
    a.book(1);
    a.crash();
    const again = await member('a', prefix, { used: 5, periodStart: PERIOD });
    await again.sync();
    expect(stored(prefix)).toBe(15); // 5 sent + 10 held: ≥ the 6 the node saw
    expect(reserves(prefix)).toEqual({});
  });
});

async function until(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await done()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('gave up waiting');
}

/** The reserve each member holds in Redis for node n. */
function reserves(prefix: string): Record<string, number> {
  const flat = redis!.cli('HGETALL', `${prefix}:reserve:n:${PERIOD}`).split('\n').filter(Boolean);
  const out: Record<string, number> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = Number(flat[i + 1]!.split(',')[0]);
  return out;
}
