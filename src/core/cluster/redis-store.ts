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
import type { OverridePush, OverrideReply } from '../keys/key-overrides.js';
import { READ_SCRIPT, RESET_SCRIPT, SYNC_SCRIPT } from './redis-scripts.js';
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
  /** The Redis life (run_id) `floor` was seen in; '-' when unknown. */
  readonly floorLife: string;
  readonly epoch: number;
  /** Credits this replica may spend before its next sync, held in Redis against a kill -9. */
  readonly reserve: number;
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
  /** Which redis-server process answered (its run_id: a restart is a new life). */
  readonly life: string;
  /** Client keys' runtime changes, when read (the clock moved, or some were sent). */
  readonly overrides?: OverrideReply;
  /** Redis's clock when it ran the sync (ms since the epoch). */
  readonly redisNow: number;
}

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

/** The keys hash as HGETALL returns it (cjson: {} when empty), parsed. */
function overridesOf(flat: unknown): OverrideReply | undefined {
  if (flat === false || flat === null || flat === undefined) return undefined;
  const list = Array.isArray(flat) ? (flat as string[]) : [];
  const fields = new Map<string, { version: number; value: string }>();
  let clock = 0;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const text = list[i + 1]!;
    if (list[i] === '~clock') clock = Number(text);
    else {
      const space = text.indexOf(' ');
      fields.set(list[i]!, { version: Number(text.slice(0, space)), value: text.slice(space + 1) });
    }
  }
  return { clock, fields };
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
   * One sync: books batch `seq` of `nodes`' deltas (once, however often it is sent), sets the
   * reserves of this incarnation of `member`, heartbeats it, reads totals, members and demand;
   * with `overrides`, writes client keys' runtime changes and reads the fleet's.
   */
  async sync(
    member: { readonly id: string; readonly incarnation: string },
    leaseTtlMs: number,
    seq: number,
    nodes: readonly NodeSync[],
    overrides?: OverridePush,
  ): Promise<SyncResult> {
    const args: Array<string | number> = [this.#prefix, member.id, leaseTtlMs, nodes.length, seq];
    args.push(member.incarnation);
    for (const node of nodes) {
      const { name, period, delta, floor, floorLife, epoch, reserve } = node;
      args.push(keyName(name), period, delta, floor, floorLife, epoch, reserve);
      args.push(Math.round(node.wantedRps * 100) / 100, node.wantedConcurrent);
    }
    if (overrides === undefined) args.push('-');
    else {
      args.push(overrides.seen, overrides.fields.length);
      for (const { field, version, value } of overrides.fields) args.push(field, version, value);
    }
    const reply = JSON.parse(String(await this.#eval(SYNC_SCRIPT, args))) as [
      string[],
      Array<[string, number, number, string[] | Record<string, never>]>,
      string,
      unknown,
      number,
    ];
    const states = new Map<string, NodeState>();
    reply[1].forEach(([, used, epoch, flat], i) => {
      // cjson writes an empty Lua table as {}, not [].
      const { rps, concurrent } = demandsOf(Array.isArray(flat) ? flat : []);
      states.set(nodes[i]!.name, { used, epoch, rpsDemand: rps, concurrentDemand: concurrent });
    });
    const members = Array.isArray(reply[0]) ? reply[0] : [];
    const read = overridesOf(reply[3]);
    return {
      members,
      nodes: states,
      life: reply[2],
      ...(read ? { overrides: read } : {}),
      redisNow: Number(reply[4]),
    };
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

  /** The fleet's client-key changes (`<prefix>:keys`): field → value, versions dropped. */
  async readKeyChanges(): Promise<Map<string, string>> {
    // node-redis answers HGETALL as an object of field → value.
    const held = (await this.#client.sendCommand(['HGETALL', `${this.#prefix}:keys`])) as Record<
      string,
      string
    >;
    const changes = new Map<string, string>();
    for (const [field, value] of Object.entries(held)) {
      const space = value.indexOf(' ');
      if (field.startsWith('~') || space < 0) continue;
      changes.set(field, value.slice(space + 1));
    }
    return changes;
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
