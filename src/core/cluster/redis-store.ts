/**
 * The shared state of a fleet of replicas, in Redis: one usage key per node per billing period
 * (the period's first day in the key's name, so a new period is a new key), an epoch key that
 * counts resets, live membership (heartbeat entries that expire), and each member's recent
 * demand per node. One script call per sync does everything for every node — book the deltas,
 * heal a total Redis lost, heartbeat, drop expired members, read totals, members and demands —
 * so a replica's Redis traffic is one round trip per sync whatever the request rate.
 *
 * Needs one Redis (or a primary with replicas): keys are built inside the script, which Redis
 * Cluster does not route.
 */
import { createHash } from 'node:crypto';
import type { ClusterConfig } from '../config/types.js';
import type { Demand } from './shares.js';

/** What one replica sends for one node at a sync. */
export interface NodeSync {
  readonly name: string;
  /** First day of the node's billing period ('YYYY-MM-DD'). */
  readonly period: string;
  /** Credits booked since the last acknowledged sync. */
  readonly delta: number;
  /** The highest total this replica has seen (heals a key Redis lost) in `epoch`. */
  readonly floor: number;
  readonly epoch: number;
  /** Recent demand: rate tokens wanted per second, and requests wanted in flight. */
  readonly wantedRps: number;
  readonly wantedConcurrent: number;
}

/** What Redis answered for one node. */
export interface NodeState {
  readonly used: number;
  readonly epoch: number;
  readonly rpsDemand: readonly Demand[];
  readonly concurrentDemand: readonly Demand[];
}

/** A sync's answer. */
export interface SyncResult {
  /** Live members (this replica included). */
  readonly members: readonly string[];
  readonly nodes: ReadonlyMap<string, NodeState>;
}

/** Usage keys expire well after their billing period (a month and a bit). */
const USAGE_TTL_MS = 40 * 24 * 3600 * 1000;

const SYNC_SCRIPT = `
local prefix, me, ttl, count, seq = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
-- A batch is applied once: a resend after a lost reply carries the same number.
local seq_key = prefix .. ':seq:' .. me
local applied = tonumber(redis.call('GET', seq_key) or '0')
local fresh = seq > applied
if fresh then redis.call('SET', seq_key, seq, 'PX', ${USAGE_TTL_MS}) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local members_key = prefix .. ':members'
redis.call('HSET', members_key, me, now + ttl)
local all = redis.call('HGETALL', members_key)
local alive, expired = {}, {}
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) >= now then alive[#alive + 1] = all[i] else expired[#expired + 1] = all[i] end
end
if #expired > 0 then redis.call('HDEL', members_key, unpack(expired)) end
redis.call('PEXPIRE', members_key, ttl * 10)
local nodes = {}
for n = 0, count - 1 do
  local at = 6 + n * 7
  local name, period = ARGV[at], ARGV[at + 1]
  local delta, floor, epoch = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
  local ukey = prefix .. ':usage:' .. name .. ':' .. period
  local ekey = prefix .. ':epoch:' .. name .. ':' .. period
  local stored_epoch = tonumber(redis.call('GET', ekey) or '0')
  local current = tonumber(redis.call('GET', ukey) or '0')
  -- Redis lost the key (restart without persistence): heal it from what replicas saw.
  if epoch == stored_epoch and current < floor then redis.call('SET', ukey, floor) end
  local used = tonumber(redis.call('GET', ukey) or '0')
  if fresh and delta ~= 0 then used = redis.call('INCRBY', ukey, delta) end
  redis.call('PEXPIRE', ukey, ${USAGE_TTL_MS})
  local dkey = prefix .. ':demand:' .. name
  redis.call('HSET', dkey, me, ARGV[at + 5] .. ',' .. ARGV[at + 6])
  if #expired > 0 then redis.call('HDEL', dkey, unpack(expired)) end
  redis.call('PEXPIRE', dkey, ttl * 10)
  nodes[#nodes + 1] = { name, used, stored_epoch, redis.call('HGETALL', dkey) }
end
return cjson.encode({ alive, nodes })
`;

const RESET_SCRIPT = `
local prefix, count = ARGV[1], tonumber(ARGV[2])
for n = 0, count - 1 do
  local name, period = ARGV[3 + n * 2], ARGV[4 + n * 2]
  redis.call('DEL', prefix .. ':usage:' .. name .. ':' .. period)
  redis.call('INCR', prefix .. ':epoch:' .. name .. ':' .. period)
  redis.call('PEXPIRE', prefix .. ':epoch:' .. name .. ':' .. period, ${USAGE_TTL_MS})
end
return count
`;

const READ_SCRIPT = `
local prefix, count = ARGV[1], tonumber(ARGV[2])
local out = {}
for n = 0, count - 1 do
  local name, period = ARGV[3 + n * 2], ARGV[4 + n * 2]
  out[#out + 1] = tonumber(redis.call('GET', prefix .. ':usage:' .. name .. ':' .. period) or '0')
end
return out
`;

/** The part of the Redis client this store uses (node-redis). */
interface RedisClient {
  sendCommand(args: string[]): Promise<unknown>;
  connect(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  readonly isReady: boolean;
}

/** Node names are keys' middle part: encoded so a ':' in a name cannot collide. */
const keyName = (name: string): string => encodeURIComponent(name);

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

function demandsOf(flat: readonly string[]): { rps: Demand[]; concurrent: Demand[] } {
  const rps: Demand[] = [];
  const concurrent: Demand[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const [wantedRps, wantedConcurrent] = flat[i + 1]!.split(',').map(Number);
    rps.push({ member: flat[i]!, wanted: wantedRps ?? 0 });
    concurrent.push({ member: flat[i]!, wanted: wantedConcurrent ?? 0 });
  }
  return { rps, concurrent };
}

/** A connection to the fleet's Redis. */
export class RedisStore {
  readonly #client: RedisClient;
  readonly #prefix: string;

  private constructor(client: RedisClient, prefix: string) {
    this.#client = client;
    this.#prefix = prefix;
  }

  /**
   * Connects (loading the Redis client only now: without [cluster] redis_url cascade never
   * loads it). Commands never queue while disconnected and give up after `redisTimeoutMs`, so a
   * stuck Redis cannot pile up work. `onError` hears connection errors (logged by the caller).
   */
  static async connect(cluster: ClusterConfig, onError: (err: Error) => void): Promise<RedisStore> {
    const { createClient } = await import('@redis/client');
    const client = createClient({
      url: cluster.redisUrl,
      disableOfflineQueue: true,
      commandOptions: { timeout: cluster.redisTimeoutMs, rejectInFlight: true },
      socket: {
        connectTimeout: Math.max(cluster.redisTimeoutMs, 1000),
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000),
      },
    }) as unknown as RedisClient;
    client.on('error', onError);
    // The first connection may fail: the client keeps reconnecting in the background.
    client.connect().catch(onError);
    return new RedisStore(client, cluster.keyPrefix);
  }

  /** True while connected. */
  get connected(): boolean {
    return this.#client.isReady;
  }

  async #eval(script: string, args: readonly (string | number)[]): Promise<unknown> {
    const argv = args.map(String);
    try {
      return await this.#client.sendCommand(['EVALSHA', sha1(script), '0', ...argv]);
    } catch (err) {
      if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
      return this.#client.sendCommand(['EVAL', script, '0', ...argv]);
    }
  }

  /**
   * One sync: books batch `seq` of `nodes`' deltas (once, however often it is sent), heartbeats
   * `member`, reads totals, members and demand.
   */
  async sync(
    member: string,
    leaseTtlMs: number,
    seq: number,
    nodes: readonly NodeSync[],
  ): Promise<SyncResult> {
    const args: Array<string | number> = [this.#prefix, member, leaseTtlMs, nodes.length, seq];
    for (const node of nodes) {
      args.push(keyName(node.name), node.period, node.delta, node.floor, node.epoch);
      args.push(Math.round(node.wantedRps * 100) / 100, node.wantedConcurrent);
    }
    const reply = JSON.parse(String(await this.#eval(SYNC_SCRIPT, args))) as [
      string[],
      Array<[string, number, number, string[] | Record<string, never>]>,
    ];
    const states = new Map<string, NodeState>();
    reply[1].forEach(([, used, epoch, flat], i) => {
      // cjson writes an empty Lua table as {}, not [].
      const { rps, concurrent } = demandsOf(Array.isArray(flat) ? flat : []);
      states.set(nodes[i]!.name, { used, epoch, rpsDemand: rps, concurrentDemand: concurrent });
    });
    return { members: Array.isArray(reply[0]) ? reply[0] : [], nodes: states };
  }

  /** Zeroes the usage of `nodes` in their periods (a new epoch every replica sees). */
  async reset(
    nodes: ReadonlyArray<{ readonly name: string; readonly period: string }>,
  ): Promise<void> {
    const args: Array<string | number> = [this.#prefix, nodes.length];
    for (const node of nodes) args.push(keyName(node.name), node.period);
    await this.#eval(RESET_SCRIPT, args);
  }

  /** The fleet's usage of `nodes` in their periods. */
  async read(
    nodes: ReadonlyArray<{ readonly name: string; readonly period: string }>,
  ): Promise<number[]> {
    const args: Array<string | number> = [this.#prefix, nodes.length];
    for (const node of nodes) args.push(keyName(node.name), node.period);
    return ((await this.#eval(READ_SCRIPT, args)) as unknown[]).map(Number);
  }

  close(): void {
    this.#client.destroy();
  }
}

/** Waits until `store` is connected, up to `timeoutMs`; false when it is not by then. */
export async function whenConnected(store: RedisStore, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!store.connected) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}
