/**
 * Client keys' runtime changes (revoke, un-revoke, budget) shared by replicas through Redis
 * (issue 27), step by step: each "replica" is the real ClientKeys and RedisCoordinator (with
 * the keys' sync channel) on a ManualClock, so the test decides who syncs when — and shows the
 * bound exactly: a change the deciding replica's sync wrote is in force on every other replica
 * after that replica's next sync, not before; a replica that joins has it before it serves;
 * Redis restarted empty or from an older snapshot gets it back from the replicas.
 */
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { coordinatedNodes } from '../../src/core/cluster/coordinated-nodes.js';
import { keyOverrideSync } from '../../src/core/cluster/key-override-sync.js';
import { RedisCoordinator, type ShareTarget } from '../../src/core/cluster/redis-coordinator.js';
import type { ClusterConfig } from '../../src/core/config/types.js';
import { ClientKeys, isRefusal } from '../../src/core/keys/client-keys.js';
import { keyPeriods } from '../../src/core/keys/key-periods.js';
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
/** Near real time: Redis versions the changes by its own clock, a change by when it was made. */
const WALL = Date.now();
const WEB = 'ck_fleet_web_0123456789abcdefghijkl';
const WEB_ROTATED = 'ck_fleet_web_rotated_0123456789abcd';
const OPS = 'ck_fleet_ops_0123456789abcdefghijkl';
const KEYS = keysOf(clientKey('web', WEB, { monthlyCredits: 10 }), clientKey('ops', OPS));

let redis: RedisServer | undefined;
let members: Replica[] = [];
let prefixCount = 0;

beforeAll(() => {
  if (missing) console.warn(`skipping Redis key override tests: ${missing}`);
});

afterEach(async () => {
  for (const replica of members) replica.crash();
  members = [];
  await redis?.stop();
  redis = undefined;
});

interface Replica {
  readonly keys: ClientKeys;
  readonly coordinator: RedisCoordinator;
  /** One call at 1 credit with `secret`: 'ok', or why the key check refused it. */
  call(secret: string): string;
  sync(): Promise<void>;
  trySync(): Promise<boolean>;
  crash(): void;
}

function clusterConfig(id: string, prefix: string): ClusterConfig {
  return replicaCluster(redis!, id, prefix, INTERVAL);
}

async function replica(
  id: string,
  prefix: string,
  keysConfig = KEYS,
  /** The replica's wall clock (a test may set it behind the others'). */
  wall: () => number = Date.now,
  /** What the replica does before its first sync (a change made before it reached Redis). */
  before: (keys: ClientKeys) => void = () => undefined,
): Promise<Replica> {
  const cluster = clusterConfig(id, prefix);
  const clock = new ManualClock(0, WALL);
  const ledger = new SharedUsageLedger();
  // Changes are stamped with when they were made, on the clock Redis versions them by: the
  // real one (WALL is today, so the manual clock's billing period is the real one too).
  const keys = new ClientKeys(keysConfig, true, clock, wall);
  before(keys);
  const { store, trySync } = await steppedStore(cluster, clock);
  const target: ShareTarget = {
    nodes: () =>
      coordinatedNodes([], ledger, clock.wallNow(), () => undefined, keyPeriods(keysConfig.keys)),
    takeDemand: () => ({ rps: 0, concurrent: 0 }),
    applyShare: () => undefined,
  };
  const logger = pino({ level: 'silent' });
  const coordinator = new RedisCoordinator(
    store,
    cluster,
    target,
    ledger,
    clock,
    logger,
    keyOverrideSync(keys, logger),
  );
  keys.shareUsage(ledger, (name) => coordinator.reset([name]));
  // As `serve` does: it serves once start resolved.
  await coordinator.start();
  let crashed = false;
  const self: Replica = {
    keys,
    coordinator,
    call(secret) {
      const who = keys.identify(secret, '127.0.0.1');
      if (who === undefined) return 'keyless';
      if (isRefusal(who)) return who.reason;
      const refused = who.admit('getSlot', '127.0.0.1', undefined, clock.now(), 1);
      if (refused !== undefined) return refused.reason;
      who.settle(1, 1);
      return 'ok';
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

/** Three replicas on a fresh Redis and prefix. */
async function fleet(): Promise<{ prefix: string; replicas: Replica[] }> {
  redis = await startRedis();
  const prefix = `ko${++prefixCount}`;
  const replicas = [
    await replica('a', prefix),
    await replica('b', prefix),
    await replica('c', prefix),
  ];
  return { prefix, replicas };
}

/** Two replicas on a fresh Redis and prefix. */
async function pair(): Promise<{ prefix: string; a: Replica; b: Replica }> {
  redis = await startRedis();
  const prefix = `ko${++prefixCount}`;
  return { prefix, a: await replica('a', prefix), b: await replica('b', prefix) };
}

/** The keys hash in Redis, without its clock. */
function storedFields(prefix: string): Record<string, string> {
  const flat = redis!.cli('HGETALL', `${prefix}:keys`).split('\n').filter(Boolean);
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2)
    if (flat[i] !== '~clock') fields[flat[i]!] = flat[i + 1]!.replace(/^\d+ /, '');
  return fields;
}

function revoke(at: Replica, name: string, revoked = true): void {
  at.keys.setRevoked(at.keys.byName(name)!, revoked);
}

/**
 * Two changes to web while Redis is away for both: `first` sets the opposite of `revoked`,
 * then `later`, 200 ms on, sets `revoked`; `first` reaches Redis first, then `later`, then
 * `first` and `others` read the outcome.
 */
async function raceDuringOutage(
  first: Replica,
  later: Replica,
  revoked: boolean,
  others: readonly Replica[] = [],
): Promise<void> {
  revoke(first, 'web', !revoked);
  // Each replica stamps on Redis's clock as its last sync read it, to within that reply's
  // delay: on a busy machine tens of ms. Changes closer than that are concurrent.
  await new Promise((resolve) => setTimeout(resolve, 200));
  revoke(later, 'web', revoked);
  for (const each of [first, later, first, ...others]) await each.sync();
}

describe.skipIf(missing !== undefined)('client keys’ runtime changes, shared by replicas', () => {
  it('two changes made while Redis was away: the later-made wins, whichever replica syncs first', async () => {
    const {
      replicas: [a, b],
    } = await fleet();
    revoke(a!, 'web');
    await a!.sync();
    await b!.sync();
    // Neither syncs: A takes the revoke back, then B — later — revokes it again; A reaches
    // Redis first, B after: B's later revoke holds everywhere.
    await raceDuringOutage(a!, b!, true);
    expect(a!.call(WEB)).toBe('revoked');
    expect(b!.call(WEB)).toBe('revoked');
  });

  it('a replica whose clock is behind still makes a change newer than the ones it has seen', async () => {
    redis = await startRedis();
    const prefix = `ko${++prefixCount}`;
    const a = await replica('a', prefix);
    const late = await replica('late', prefix, KEYS, () => Date.now() - 30_000);
    revoke(a, 'web');
    await a.sync();
    await late.sync();
    expect(late.call(WEB)).toBe('revoked');
    // 30 s behind, its un-revoke still follows the revoke it read: it holds everywhere.
    revoke(late, 'web', false);
    await late.sync();
    await a.sync();
    expect(a.call(WEB)).toBe('ok');
    expect(late.call(WEB)).toBe('ok');
  });

  it('a replica whose clock is an hour ahead stamps its changes on Redis’s time: later ones still win', async () => {
    const { prefix, a, b } = await pair();
    const ahead = await replica('ahead', prefix, KEYS, () => Date.now() + 3_600_000);
    revoke(ahead, 'web');
    await ahead.sync();
    await a.sync();
    await b.sync();
    expect(a.call(WEB)).toBe('revoked');
    // Then, Redis away for A and B: A takes it back, B — later — revokes it again; A reaches
    // Redis first, and B's later revoke holds all the same (no hour-ahead version to tie on).
    await raceDuringOutage(a, b, true, [ahead]);
    for (const each of [a, b, ahead]) expect(each.call(WEB)).toBe('revoked');
  });

  it('a change made an hour ahead before the replica reached Redis is restamped on Redis’s time', async () => {
    const { prefix, a, b } = await pair();
    revoke(a, 'web');
    await a.sync();
    await b.sync();
    // Started while Redis was away, an hour ahead: it takes the revoke back before its first sync.
    const ahead = await replica(
      'ahead',
      prefix,
      KEYS,
      () => Date.now() + 3_600_000,
      (keys) => keys.setRevoked(keys.byName('web')!, false),
    );
    await ahead.sync();
    await a.sync();
    await b.sync();
    expect(a.call(WEB)).toBe('ok');
    // Then A and B, Redis away: A revokes, B — later — takes it back; A reaches Redis first.
    await raceDuringOutage(a, b, false, [ahead]);
    // B's later change holds: no hour-ahead version made the two tie.
    for (const each of [a, b, ahead]) expect(each.call(WEB)).toBe('ok');
  });

  it('a change that waited unsent is turned down when the fleet changed the key after it was made', async () => {
    const {
      prefix,
      replicas: [a, b],
    } = await fleet();
    revoke(a!, 'web');
    await a!.sync();
    await b!.sync();
    expect(b!.call(WEB)).toBe('revoked');
    // A takes the revoke back but does not sync (Redis away, say) …
    revoke(a!, 'web', false);
    expect(a!.call(WEB)).toBe('ok');
    // … while B revokes it again, later, and that reaches Redis first.
    await new Promise((resolve) => setTimeout(resolve, 200));
    revoke(b!, 'web');
    await b!.sync();
    // A's older un-revoke does not undo B's newer revoke: Redis keeps it, A reads it.
    await a!.sync();
    expect(a!.call(WEB)).toBe('revoked');
    expect(storedFields(prefix)[`revoke:web:${keyFingerprint(WEB)}`]).toBe('1');
    await b!.sync();
    expect(b!.call(WEB)).toBe('revoked');

    // A change made after the fleet's last word goes through as before.
    revoke(a!, 'web', false);
    await a!.sync();
    await b!.sync();
    expect(b!.call(WEB)).toBe('ok');
  });

  it('a revoke written by one replica’s sync is refused by every other after its next sync', async () => {
    const {
      replicas: [a, b, c],
    } = await fleet();
    for (const each of [a!, b!, c!]) expect(each.call(WEB)).toBe('ok');
    revoke(a!, 'web');
    // Refused at once where it was made; the admin API answers once a sync wrote it.
    expect(a!.call(WEB)).toBe('revoked');
    const written = a!.coordinator.nextSync();
    await a!.sync();
    expect(await written).toBe(true);
    // The bound, exactly: B has not synced since, so it still serves the key …
    expect(b!.call(WEB)).toBe('ok');
    // … and refuses it after its next sync. So does C. The other key is untouched.
    await b!.sync();
    expect(b!.call(WEB)).toBe('revoked');
    await c!.sync();
    expect(c!.call(WEB)).toBe('revoked');
    expect(c!.call(OPS)).toBe('ok');

    // Un-revoked on C: served again everywhere after one sync each.
    revoke(c!, 'web', false);
    await c!.sync();
    await a!.sync();
    await b!.sync();
    for (const each of [a!, b!, c!]) expect(each.call(WEB)).toBe('ok');
  });

  it('a budget set on one replica applies on the others, until the config’s monthly_credits changes', async () => {
    const {
      replicas: [a, b, c],
    } = await fleet();
    expect(a!.call(WEB)).toBe('ok');
    expect(a!.call(WEB)).toBe('ok');
    await a!.sync();
    b!.keys.setBudget(b!.keys.byName('web')!, 2);
    await b!.sync();
    await a!.sync();
    await c!.sync();
    for (const each of [a!, b!, c!]) {
      expect(each.keys.byName('web')!.budget).toBe(2);
      expect(each.call(WEB)).toBe('budget');
    }
    // Back to the config's budget (10), fleet-wide.
    c!.keys.setBudget(c!.keys.byName('web')!, undefined);
    await c!.sync();
    await a!.sync();
    expect(a!.keys.byName('web')!.budget).toBe(10);
    expect(a!.call(WEB)).toBe('ok');
    // Set again on A; a replica whose config now says another monthly_credits keeps its config.
    a!.keys.setBudget(a!.keys.byName('web')!, 3);
    await a!.sync();
    b!.keys.reconfigure(
      keysOf(clientKey('web', WEB, { monthlyCredits: 50 }), clientKey('ops', OPS)),
    );
    await b!.sync();
    await c!.sync();
    expect(b!.keys.byName('web')!.budget).toBe(50);
    expect(c!.keys.byName('web')!.budget).toBe(3);
  });

  it('a replica started after the revoke refuses the key from its first call', async () => {
    const {
      prefix,
      replicas: [a],
    } = await fleet();
    revoke(a!, 'web');
    a!.keys.setBudget(a!.keys.byName('ops')!, 0);
    await a!.sync();
    // start() resolves after its first syncs: the changes are in force before it serves.
    const late = await replica('d', prefix);
    expect(late.call(WEB)).toBe('revoked');
    expect(late.call(OPS)).toBe('budget');
  });

  it('Redis restarted empty: the key stays revoked, and the replicas write it back', async () => {
    const {
      prefix,
      replicas: [a, b, c],
    } = await fleet();
    revoke(a!, 'web');
    b!.keys.setBudget(b!.keys.byName('ops')!, 0);
    for (const each of [a!, b!, c!, a!]) await each.sync();
    const before = storedFields(prefix);
    expect(Object.values(before).sort()).toEqual(['0@-', '1']);
    await redis!.restart();
    expect(storedFields(prefix)).toEqual({});
    // Every sync after the restart: the key stays refused on every replica.
    for (let round = 0; round < 3; round++) {
      for (const each of [a!, b!, c!]) {
        await each.sync();
        expect(each.call(WEB)).toBe('revoked');
        expect(each.call(OPS)).toBe('budget');
      }
    }
    expect(storedFields(prefix)).toEqual(before);
    // A replica that knew nothing of them starts with them.
    const late = await replica('d', prefix);
    expect(late.call(WEB)).toBe('revoked');
    expect(late.call(OPS)).toBe('budget');
  });

  it('Redis back from an older snapshot: the newer change wins again', async () => {
    const {
      prefix,
      replicas: [a, b],
    } = await fleet();
    revoke(a!, 'web');
    await a!.sync();
    redis!.snapshot();
    revoke(b!, 'web', false);
    await b!.sync();
    await a!.sync();
    expect(a!.call(WEB)).toBe('ok');
    await redis!.kill();
    await redis!.start({ fromSnapshot: true });
    expect(storedFields(prefix)[`revoke:web:${keyFingerprint(WEB)}`]).toBe('1');
    for (const each of [a!, b!, a!, b!]) {
      await each.sync();
      expect(each.call(WEB)).toBe('ok');
    }
    expect(storedFields(prefix)[`revoke:web:${keyFingerprint(WEB)}`]).toBe('0');
    expect((await replica('d', prefix)).call(WEB)).toBe('ok');
  });

  it('a revoke names the secret: a rotated key is served, the old secret put back is not', async () => {
    const {
      prefix,
      replicas: [a, b],
    } = await fleet();
    revoke(a!, 'web');
    await a!.sync();
    await b!.sync();
    // B rotates: same name, new secret (its usage stays the name's).
    const rotated = keysOf(
      clientKey('web', WEB_ROTATED, { monthlyCredits: 10 }),
      clientKey('ops', OPS),
    );
    b!.keys.reconfigure(rotated);
    expect(b!.call(WEB_ROTATED)).toBe('ok');
    await b!.sync();
    await a!.sync();
    expect(a!.call(WEB)).toBe('revoked');
    // Removed from A's config, then put back with the leaked secret: still revoked.
    a!.keys.reconfigure(keysOf(clientKey('ops', OPS)));
    expect(a!.call(WEB)).toBe('unknown_key');
    a!.keys.reconfigure(KEYS);
    expect(a!.call(WEB)).toBe('revoked');
    // A replica started with the new secret serves it.
    expect((await replica('d', prefix, rotated)).call(WEB_ROTATED)).toBe('ok');
  });
});

/** The 16 hex digits of a key's SHA-256 a revoke names. */
function keyFingerprint(secret: string): string {
  return clientKey('x', secret).sha256.slice(0, 16);
}
