/**
 * The primary's view of its workers (`cascade serve --workers N`). Every ≤ 50 ms each worker
 * reports what it booked and what it wanted since its last report; the hub adds the usage to
 * the primary's ledger (the one quotas.json is written from), and answers with the fleet's
 * usage and that worker's share of each node's limits — the replica's limits (the configured
 * ones, or this replica's share of the fleet's when replicas share through Redis) split
 * between the live workers by demand. Penalties a worker learns are passed on to the others,
 * and so are the node heads its answers showed (each worker judges lag with the heads the
 * whole fleet has seen, not only the nodes its own share of the traffic happened to reach).
 * Client keys' counters (`key:NAME`) travel the same way as nodes': a key's usage is booked in
 * the primary's ledger, its limits split between the workers by each one's demand for the key.
 */
import { Bound, type RelayedReading } from '../chain/chain-state.js';
import type { UsageLedger } from '../quota/usage-ledger.js';
import type { CoordinatedNode, ShareTarget } from './redis-coordinator.js';
import { ShareGate, smoothDemand, splitLimit } from './shares.js';

/** A worker's report (worker → primary). */
export interface WorkerSync {
  readonly t: 'sync';
  /** Credits booked since the last report, per node. */
  readonly deltas: Readonly<Record<string, number>>;
  /** Demand since the last report per node: [rate tokens wanted (a count), most wanted in flight]. */
  readonly demand: Readonly<Record<string, readonly [number, number]>>;
  /** Penalties it applied since the last report: [node, seconds], seconds 0 = recovered. */
  readonly penalties: ReadonlyArray<readonly [string, number]>;
  /** Credits its cache saved since the last report, per node (absent: none). */
  readonly saved?: Readonly<Record<string, number>>;
  /** Node heads its own answers showed since the last report (absent: none). */
  readonly heads?: readonly RelayedReading[];
}

/** The primary's answer (primary → worker). */
export interface PrimaryState {
  readonly t: 'state';
  /** The fleet's usage per node: [credits, epoch]. */
  readonly totals: Readonly<Record<string, readonly [number, number]>>;
  /**
   * This worker's share per node: [rps, concurrent] (null = no limit); a client key's counter
   * (`key:NAME`) carries a third, its share of per_ip_rps, when the key has one.
   */
  readonly shares: Readonly<Record<string, WorkerShare>>;
  /** Penalties other workers learned: [node, seconds] (0 = recovered). */
  readonly penalties: ReadonlyArray<readonly [string, number]>;
  /** Node heads other workers saw that this one was not told yet (absent: none). */
  readonly heads?: readonly RelayedReading[];
}

/** A head reading the primary holds for the workers: the newest per node and commitment. */
interface HeldReading {
  readonly reading: RelayedReading;
  /** When it was seen, on the primary's clock. */
  readonly seenAt: number;
  /** The worker that reported it (it is not told its own reading back). */
  readonly from: number;
  /** Order of arrival: a worker is told the readings past the last one it was told. */
  readonly seq: number;
}

/**
 * How long the primary keeps a head reading nobody refreshed: longer than any sensible
 * `head_max_age_seconds` (each worker drops the ones past its own age limit anyway).
 */
const HELD_READING_MS = 10 * 60_000;

/** One worker's share of one node's (or key's) limits: [rps, concurrent, per-IP rps?]. */
export type WorkerShare = readonly [number | null, number | null, (number | null)?];

interface Gates {
  readonly rps: ShareGate;
  readonly concurrent: ShareGate;
  readonly perIp: ShareGate;
}

interface WorkerState {
  /** Latest reported most-wanted-in-flight per node (the Redis coordinator sums them). */
  readonly concurrent: Map<string, number>;
  /** Smoothed demand per node: the weights of the split. */
  readonly smoothed: Map<string, { rps: number; concurrent: number }>;
  readonly gates: Map<string, Gates>;
  /** Penalties learned by other workers, not yet told to this one. */
  inbox: Array<readonly [string, number]>;
  /** The last head reading (HeldReading.seq) this worker was told. */
  toldHeads: number;
}

const finite = (value: number): number | null => (Number.isFinite(value) ? value : null);

/** The primary's bookkeeping of its workers. */
export class WorkerHub implements ShareTarget {
  readonly #workers = new Map<number, WorkerState>();
  /** This replica's share of each node's limits (set by the Redis coordinator). */
  readonly #replicaShares = new Map<string, { rps: number; concurrent: number; perIp: number }>();
  /** Rate tokens the workers wanted since the coordinator last asked, per node. */
  readonly #wanted = new Map<string, number>();

  /** The newest head reading per node and commitment (`name/slot`), from any worker. */
  readonly #readings = new Map<string, HeldReading>();
  #readingSeq = 0;

  constructor(
    private readonly ledger: UsageLedger,
    private readonly nodeList: () => readonly CoordinatedNode[],
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A worker joined: it starts with no share and grows into one over a few splits. */
  add(id: number): void {
    this.#workers.set(id, {
      concurrent: new Map(),
      smoothed: new Map(),
      gates: new Map(),
      inbox: [],
      toldHeads: -1,
    });
  }

  /** A worker is gone (exited or crashed): its share returns to the others. */
  remove(id: number): void {
    this.#workers.delete(id);
  }

  get size(): number {
    return this.#workers.size;
  }

  /** Takes worker `id`'s report and returns its answer. */
  sync(id: number, report: WorkerSync): PrimaryState {
    const worker = this.#workers.get(id);
    if (worker === undefined) return { t: 'state', totals: {}, shares: {}, penalties: [] };
    for (const [name, credits] of Object.entries(report.deltas)) {
      if (credits !== 0) this.ledger.counter(name).add(credits);
    }
    for (const [name, credits] of Object.entries(report.saved ?? {})) {
      this.ledger.counter(name).save(credits);
    }
    for (const [name, [rps, concurrent]] of Object.entries(report.demand)) {
      this.#wanted.set(name, (this.#wanted.get(name) ?? 0) + rps);
      worker.concurrent.set(name, concurrent);
      const before = worker.smoothed.get(name);
      worker.smoothed.set(name, {
        rps: smoothDemand(before?.rps, rps),
        concurrent: smoothDemand(before?.concurrent, concurrent),
      });
    }
    for (const [otherId, other] of this.#workers) {
      if (otherId !== id) other.inbox.push(...report.penalties);
    }
    const penalties = worker.inbox;
    worker.inbox = [];
    const now = this.now();
    if (report.heads !== undefined) this.#holdReadings(id, report.heads, now);
    const heads = this.#headsFor(id, worker, now);
    const state: PrimaryState = {
      t: 'state',
      totals: this.#totals(),
      shares: this.#sharesOf(worker),
      penalties,
    };
    return heads.length === 0 ? state : { ...state, heads };
  }

  /** Keeps each reported reading unless a newer one of that node's head is held. */
  #holdReadings(from: number, readings: readonly RelayedReading[], now: number): void {
    for (const reading of readings) {
      const [node, slot, value, bound, age] = reading;
      const key = `${node}/${slot}`;
      const seenAt = now - age;
      const held = this.#readings.get(key);
      if (held !== undefined) {
        if (held.seenAt >= seenAt) continue;
        // "At least N" adds nothing to a head known at N or above.
        if (bound === Bound.atLeast && held.reading[2] >= value) continue;
      }
      this.#readings.set(key, { reading, seenAt, from, seq: ++this.#readingSeq });
    }
  }

  /** The held readings worker `id` was not told yet (not its own), ages as of `now`. */
  #headsFor(id: number, worker: WorkerState, now: number): RelayedReading[] {
    const heads: RelayedReading[] = [];
    if (worker.toldHeads === this.#readingSeq) return heads;
    for (const [key, held] of this.#readings) {
      if (now - held.seenAt > HELD_READING_MS) {
        this.#readings.delete(key);
        continue;
      }
      if (held.seq <= worker.toldHeads || held.from === id) continue;
      const [node, slot, value, bound] = held.reading;
      heads.push([node, slot, value, bound, now - held.seenAt]);
    }
    worker.toldHeads = this.#readingSeq;
    return heads;
  }

  /**
   * Splits every node's limits between the workers, all at once from one view of their demand
   * (the primary calls this once per sync interval). Each worker's gate keeps its share under
   * its last few splits, so the shares in force stay within one common split however late
   * each answer reaches its worker.
   */
  tick(): void {
    const workers = [...this.#workers];
    for (const node of this.nodeList()) {
      const limits = this.#replicaShares.get(node.name) ?? {
        rps: node.rpsLimit,
        concurrent: node.concurrentLimit,
        perIp: node.perIpLimit ?? Infinity,
      };
      const weights = (pick: 'rps' | 'concurrent') =>
        workers.map(([id, w]) => ({
          member: String(id),
          wanted: w.smoothed.get(node.name)?.[pick] ?? 0,
        }));
      const rps = splitLimit(limits.rps, weights('rps'));
      const concurrent = splitLimit(limits.concurrent, weights('concurrent'));
      // A per-IP rate goes where the requests go: split by the rate's demand.
      const perIp =
        node.perIpLimit === undefined ? undefined : splitLimit(limits.perIp, weights('rps'));
      for (const [id, worker] of workers) {
        const gates = this.#gatesOf(worker, node.name);
        gates.rps.next(rps.get(String(id)) ?? 0);
        gates.concurrent.next(concurrent.get(String(id)) ?? 0);
        if (perIp !== undefined) gates.perIp.next(perIp.get(String(id)) ?? 0);
      }
    }
  }

  #totals(): Record<string, readonly [number, number]> {
    const totals: Record<string, readonly [number, number]> = {};
    for (const node of this.nodeList()) {
      totals[node.name] = [this.ledger.counter(node.name).used, this.ledger.epoch(node.name)];
    }
    return totals;
  }

  #sharesOf(worker: WorkerState): Record<string, WorkerShare> {
    const shares: Record<string, WorkerShare> = {};
    for (const node of this.nodeList()) {
      const gates = this.#gatesOf(worker, node.name);
      const rps = finite(gates.rps.applied);
      const concurrent = finite(gates.concurrent.applied);
      shares[node.name] =
        node.perIpLimit === undefined
          ? [rps, concurrent]
          : [rps, concurrent, finite(gates.perIp.applied)];
    }
    return shares;
  }

  #gatesOf(worker: WorkerState, name: string): Gates {
    let gates = worker.gates.get(name);
    if (gates === undefined) {
      gates = { rps: new ShareGate(), concurrent: new ShareGate(), perIp: new ShareGate() };
      worker.gates.set(name, gates);
    }
    return gates;
  }

  // ShareTarget: the Redis coordinator sees the workers as one replica.
  nodes(): readonly CoordinatedNode[] {
    return this.nodeList();
  }

  takeDemand(name: string): { rps: number; concurrent: number } {
    const rps = this.#wanted.get(name) ?? 0;
    this.#wanted.delete(name);
    let concurrent = 0;
    for (const worker of this.#workers.values()) concurrent += worker.concurrent.get(name) ?? 0;
    return { rps, concurrent };
  }

  applyShare(name: string, rps: number, concurrent: number, perIp = Infinity): void {
    this.#replicaShares.set(name, { rps, concurrent, perIp });
  }
}
