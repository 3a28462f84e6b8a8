/**
 * Makes N replicas on any number of machines behave as one proxy toward each provider. Every
 * sync interval (≤ 100 ms) this replica sends Redis its new usage and its demand per node in
 * one script call, and gets back the fleet's usage and every member's demand; from those it
 * computes its share of each node's rps and concurrency limits (see shares.ts) and applies
 * them to its own limiters. No request ever waits on Redis.
 *
 * Redis slow or down: the sync is skipped (its usage goes again next time), the last shares are
 * kept for `lease_ttl_ms`, then each limit falls back to `fallback_fraction` of it (by default
 * split by the members last seen). Usage booked meanwhile is kept and sent on reconnect.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock, ClockTimer } from '../clock.js';
import type { ClusterConfig } from '../config/types.js';
import { ResetNotApplied } from '../errors.js';
import type { ClusterSample } from '../metrics.js';
import { ReservationPace, earlySyncAt } from '../quota/reservation-pace.js';
import type { SharedUsageLedger } from '../quota/shared-usage-ledger.js';
import type { OverrideChannel } from './key-override-sync.js';
import type { NodeSync, RedisStore, SyncResult } from './redis-store.js';
import { ShareGate, smoothDemand, splitLimit } from './shares.js';

/** One node as the coordinator sees it. */
export interface CoordinatedNode {
  readonly name: string;
  /** Provider limits to split (Infinity = none). */
  readonly rpsLimit: number;
  readonly concurrentLimit: number;
  /** A per-client-IP rate to split too, by the rate's demand (client keys' per_ip_rps). */
  readonly perIpLimit?: number;
  /** First day of its current billing period. */
  readonly period: string;
}

/** The replica's side: its nodes, their demand, and where shares go. */
export interface ShareTarget {
  nodes(): readonly CoordinatedNode[];
  /** Demand since the last call: rate tokens wanted (a count), requests wanted in flight. */
  takeDemand(name: string): { readonly rps: number; readonly concurrent: number };
  /**
   * This replica now enforces `rps` and `concurrent` of the node's limits (and `perIp` of its
   * per-IP rate, for a counter that has one).
   */
  applyShare(name: string, rps: number, concurrent: number, perIp?: number): void;
}

/** Syncs a joining replica waits for before it serves (its shares grow in over a few syncs). */
const READY_AFTER_SYNCS = 4;

/** How long a stopping replica keeps trying to hand its last usage to Redis. */
const STOP_SYNC_MS = 3000;

interface Gates {
  readonly rps: ShareGate;
  readonly concurrent: ShareGate;
  readonly perIp: ShareGate;
}

/** Coordinates this replica's limits and usage with the others through Redis. */
export class RedisCoordinator {
  readonly #gates = new Map<string, Gates>();
  readonly #shares = new Map<string, { rps: number; concurrent: number }>();
  #timer: ClockTimer | undefined;
  /** The early sync asked for by a counter (`#syncDue`), at the clock's next turn. */
  #soonTimer: ClockTimer | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  /** Syncing on the timer (start's first syncs are done). */
  #steady = false;
  /** A timed or early sync is on its way to Redis (until its next one is scheduled). */
  #inFlight = false;
  /** A counter booked half its reserve: the next sync goes now, not at the timer. */
  #soon = false;
  #lastOk = -Infinity;
  /** When start() began: the lease runs from then until a first sync succeeds. */
  #startedAt = -Infinity;
  #lastDemandAt: number;
  #members = 1;
  #errors = 0;
  #up = false;
  #fallback = false;
  /** Smoothed demand per node: what this replica tells the others it wants. */
  readonly #wanted = new Map<string, { rps: number; concurrent: number }>();
  /** Spending per node, which sizes the reserve held against a kill -9. */
  readonly #paces = new Map<string, ReservationPace>();
  /** This process among the members of its name: a restart under the same name is another. */
  readonly #member: { readonly id: string; readonly incarnation: string };
  /** Callers of `nextSync`, told how the next sync to start went. */
  #waiting: Array<(ok: boolean) => void> = [];

  constructor(
    private readonly store: RedisStore,
    private readonly cluster: ClusterConfig,
    private readonly target: ShareTarget,
    private readonly ledger: SharedUsageLedger,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly overrides?: OverrideChannel,
  ) {
    this.#lastDemandAt = clock.now();
    this.#member = { id: cluster.replicaId, incarnation: randomBytes(6).toString('hex') };
  }

  /**
   * Starts syncing. Resolves once two syncs succeeded (this replica has its shares and the
   * others have seen it), or after the lease when Redis cannot be reached (fallback shares).
   */
  async start(): Promise<void> {
    this.#startedAt = this.clock.now();
    const deadline = this.#startedAt + this.cluster.leaseTtlMs;
    let synced = 0;
    while (synced < READY_AFTER_SYNCS && this.clock.now() < deadline) {
      if (await this.#sync()) synced++;
      else
        await this.clock.sleep(Math.min(this.cluster.syncIntervalMs, deadline - this.clock.now()));
    }
    if (synced < READY_AFTER_SYNCS) this.#fallBack();
    this.#schedule();
  }

  /**
   * Stops syncing after sending what was booked, trying for up to STOP_SYNC_MS (a busy machine
   * or Redis may miss a few deadlines; an unacknowledged batch would leave quotas.json counting
   * it on top of the fleet's total). What still did not go stays unsent in quotas.json, sent
   * again under its number at the next start.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#soonTimer?.cancel();
    await this.#running;
    const deadline = this.clock.now() + STOP_SYNC_MS;
    // Stopped, a sync releases the reserves. A batch outstanding when the stop began goes
    // first, as it was; then one more carries what was booked since.
    for (let acknowledged = 0; acknowledged < 2;) {
      if (await this.#sync()) {
        acknowledged++;
        if (this.ledger.allAcknowledged()) break;
      } else if (this.clock.now() >= deadline) break;
      else await this.clock.sleep(this.cluster.syncIntervalMs);
    }
    this.store.close();
  }

  /**
   * Resolves once the next sync to start is done: true when it reached Redis (what was changed
   * before this call — a key's revoke, say — is written there), false when it did not.
   */
  nextSync(): Promise<boolean> {
    if (this.#stopped) return Promise.resolve(false);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /**
   * Zeroes the fleet's usage of `names` (seen by every replica at its next sync); throws
   * ResetNotApplied, nothing changed, when Redis does not take it.
   */
  async reset(names: readonly string[]): Promise<void> {
    const nodes = this.target.nodes().filter((node) => names.includes(node.name));
    try {
      await this.store.reset(nodes.map(({ name, period }) => ({ name, period })));
    } catch (err) {
      throw new ResetNotApplied(err);
    }
  }

  sample(): ClusterSample {
    const unflushed = new Map<string, number>();
    for (const node of this.target.nodes())
      unflushed.set(node.name, this.ledger.unflushed(node.name));
    return {
      members: this.#members,
      redisUp: this.#up,
      errors: this.#errors,
      syncAgeSeconds: (this.clock.now() - this.#lastOk) / 1000,
      shares: this.#shares,
      unflushed,
    };
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#steady = true;
    if (this.#soon) this.#syncNow();
    else this.#timer = this.clock.setTimer(() => this.#syncNow(), this.cluster.syncIntervalMs);
  }

  #syncNow(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#inFlight = true;
    this.#running = this.#sync().then(() => {
      this.#inFlight = false;
      this.#schedule();
    });
  }

  /**
   * A counter booked half the reserve it holds (armed after each sync that reached Redis):
   * sync now rather than at the timer, so a load rising faster than the pace stays covered
   * (reservation-pace.ts). Runs on the booking's stack, so it only notes the ask and sets a
   * timer for the clock's next turn (a hand-moved clock in tests keeps every sync in step); a
   * sync on its way takes the ask up when it is done, and the syncs `start` and `stop` run
   * themselves carry it.
   */
  readonly #syncDue = (): void => {
    if (this.#soon || this.#stopped) return;
    this.#soon = true;
    this.#soonTimer = this.clock.setTimer(() => {
      this.#soonTimer = undefined;
      if (this.#steady && !this.#inFlight && !this.#stopped && this.#soon) this.#syncNow();
    }, 0);
  };

  /** One sync; false when Redis could not be reached (nothing is lost). */
  async #sync(): Promise<boolean> {
    const waiting = this.#waiting;
    this.#waiting = [];
    // This sync carries every ask made so far.
    this.#soon = false;
    this.#soonTimer?.cancel();
    this.#soonTimer = undefined;
    const ok = await this.#syncOnce();
    for (const tell of waiting) tell(ok);
    return ok;
  }

  async #syncOnce(): Promise<boolean> {
    const nodes = this.target.nodes();
    const now = this.clock.now();
    const seconds = Math.max((now - this.#lastDemandAt) / 1000, 0.001);
    this.#lastDemandAt = now;
    const batch = this.ledger.takeDeltas();
    const request: NodeSync[] = nodes.map((node) => {
      const sample = this.target.takeDemand(node.name);
      const before = this.#wanted.get(node.name);
      const demand = {
        rps: smoothDemand(before?.rps, sample.rps / seconds),
        concurrent: smoothDemand(before?.concurrent, sample.concurrent),
      };
      this.#wanted.set(node.name, demand);
      return {
        name: node.name,
        period: node.period,
        delta: batch.deltas.get(node.name) ?? 0,
        floor: this.ledger.floor(node.name),
        floorLife: this.ledger.floorLife(node.name),
        epoch: this.ledger.epoch(node.name),
        reserve: this.#reserve(node.name, this.ledger.takeSyncAsk(node.name)),
        wantedRps: demand.rps,
        wantedConcurrent: demand.concurrent,
      };
    });
    const push = this.overrides?.outgoing();
    let result: SyncResult;
    try {
      const { leaseTtlMs } = this.cluster;
      result = await this.store.sync(this.#member, leaseTtlMs, batch.seq, request, push);
    } catch (err) {
      // The batch stays as it is, to be sent again under its number (and the keys' changes).
      this.#failed(err as Error);
      return false;
    }
    this.#succeeded(nodes, result);
    if (!this.#stopped)
      for (const { name, reserve } of request)
        this.ledger.armSync(name, earlySyncAt(reserve), this.#syncDue);
    if (push !== undefined) this.overrides!.incoming(push, result.overrides, result.redisNow);
    return true;
  }

  /**
   * Credits to hold ahead for `name` until the next sync (none once stopping); `early` when
   * its bookings asked for this sync.
   */
  #reserve(name: string, early: boolean): number {
    let pace = this.#paces.get(name);
    if (pace === undefined) {
      pace = new ReservationPace();
      this.#paces.set(name, pace);
    }
    const reserve = pace.next(this.ledger.bookedHere(name), early);
    return this.#stopped ? 0 : reserve;
  }

  #succeeded(nodes: readonly CoordinatedNode[], result: SyncResult): void {
    this.ledger.acknowledge();
    this.#lastOk = this.clock.now();
    this.#members = Math.max(1, result.members.length);
    if (!this.#up)
      this.logger.info(
        { members: this.#members },
        'cluster: Redis reachable; sharing limits and usage',
      );
    this.#up = true;
    this.#fallback = false;
    const me = this.cluster.replicaId;
    for (const node of nodes) {
      const state = result.nodes.get(node.name);
      if (state === undefined) continue;
      this.ledger.settle(node.name, { used: state.used, epoch: state.epoch, life: result.life });
      const gates = this.#gatesOf(node.name);
      const rps = gates.rps.next(splitLimit(node.rpsLimit, state.rpsDemand).get(me) ?? 0);
      const concurrent = gates.concurrent.next(
        splitLimit(node.concurrentLimit, state.concurrentDemand).get(me) ?? 0,
      );
      const perIp =
        node.perIpLimit === undefined
          ? undefined
          : gates.perIp.next(splitLimit(node.perIpLimit, state.rpsDemand).get(me) ?? 0);
      this.#apply(node.name, rps, concurrent, perIp);
    }
  }

  #failed(err: Error): void {
    this.#errors++;
    if (this.#up) {
      this.logger.warn(
        { err: err.message },
        'cluster: Redis unreachable; keeping the last shares for the lease',
      );
    }
    this.#up = false;
    // A first sync that fails while the client still connects is no lost lease: the lease runs
    // from the start, and start() falls back by itself if Redis stays away that long.
    const since = Math.max(this.#lastOk, this.#startedAt);
    if (!this.#fallback && this.clock.now() - since > this.cluster.leaseTtlMs) this.#fallBack();
  }

  /** Redis lost past the lease: each limit × the fallback fraction. */
  #fallBack(): void {
    const fraction = this.cluster.fallbackFraction ?? 1 / this.#members;
    this.logger.warn(
      { fraction },
      'cluster: Redis unreachable past the lease; each limit falls back to a fraction',
    );
    this.#fallback = true;
    const part = (limit: number) =>
      Number.isFinite(limit) ? Math.floor(limit * fraction) : Infinity;
    for (const node of this.target.nodes()) {
      const rps = part(node.rpsLimit);
      const concurrent = part(node.concurrentLimit);
      const perIp = node.perIpLimit === undefined ? undefined : part(node.perIpLimit);
      // The fallback is safe by itself (a fixed fraction): taken at once, and the gates start
      // from it, so syncs that resume grow from there.
      this.#gates.set(node.name, {
        rps: new ShareGate(rps),
        concurrent: new ShareGate(concurrent),
        perIp: new ShareGate(perIp ?? Infinity),
      });
      this.#apply(node.name, rps, concurrent, perIp);
    }
  }

  #apply(name: string, rps: number, concurrent: number, perIp: number | undefined): void {
    this.#shares.set(name, { rps, concurrent });
    if (perIp === undefined) this.target.applyShare(name, rps, concurrent);
    else this.target.applyShare(name, rps, concurrent, perIp);
  }

  #gatesOf(name: string): Gates {
    let gates = this.#gates.get(name);
    if (gates === undefined) {
      gates = { rps: new ShareGate(), concurrent: new ShareGate(), perIp: new ShareGate() };
      this.#gates.set(name, gates);
    }
    return gates;
  }
}
