/**
 * What the primary of `--workers N` and its workers say to each other over IPC. The channel
 * uses structured clone ('advanced' serialization, set by the primary before it forks), so a
 * parsed `Config` — Maps, typed arrays, Infinity — crosses it as it is.
 */
import type { Worker } from 'node:cluster';
import type { NodeView } from '../admin/node-view.js';
import type { Config } from '../config/types.js';
import type { KeyOverrides } from '../keys/key-overrides.js';
import type { PrimaryState, WorkerSync } from './worker-hub.js';
import type { KeyActivity } from '../keys/key-activity.js';
import type { SeriesSnapshot } from '../metrics.js';

/** Messages a worker receives from the primary, besides sync answers. */
export type PrimaryCommand =
  | (PrimaryState & { readonly cordoned?: readonly string[] })
  /**
   * The config to serve, checked by the primary: `start` answers a worker's `hello`, `reload`
   * carries every applied reload. A worker never reads the config file itself.
   */
  | { readonly t: 'start'; readonly config: Config; readonly workers?: number }
  | { readonly t: 'reload'; readonly config: Config }
  /** The primary asks for this worker's node rows (GET /admin/nodes). */
  | { readonly t: 'view'; readonly id: number }
  /** The cordoned nodes now: apply, then reply. */
  | { readonly t: 'cordon'; readonly id: number; readonly cordoned: readonly string[] }
  /**
   * The operator's runtime changes to client keys (revokes, budgets: the primary's book,
   * whole): apply, then reply when there is an `id` (sent without one right after `start`).
   */
  | { readonly t: 'keys'; readonly id?: number; readonly overrides: KeyOverrides }
  /** The primary asks for this worker's calls per key (GET /admin/keys). */
  | { readonly t: 'keyview'; readonly id: number }
  /** The primary asks for this worker's metric series (a /metrics scrape), to add them up. */
  | { readonly t: 'series'; readonly id: number }
  | { readonly t: 'shutdown' }
  | { readonly t: 'answer'; readonly id: number; readonly value: unknown };

/** One worker's view of one node's chain state, once its answers showed a head. */
export interface WorkerNodeChain {
  readonly head: Readonly<Record<string, number>>;
  /** -1: unknown. */
  readonly lag: number;
  readonly wrongChain: boolean;
}

/**
 * One worker's view of one node: ms of penalty left (0 = none), latency EMA in µs (-1 = none),
 * and its chain state when the worker's tracker knows any (absent: a plain fleet).
 */
export type WorkerNodeHealth = readonly [number, number, WorkerNodeChain?];

/** Messages a worker sends, besides its sync reports. */
export type WorkerMessage =
  /** A worker has started and asks for its config. */
  | { readonly t: 'hello' }
  | (WorkerSync & { readonly health: Record<string, WorkerNodeHealth> })
  | { readonly t: 'ask'; readonly id: number; readonly what: 'health' | 'metrics' }
  /**
   * The answer to the primary's `view` (the rows), `keyview` (calls per key) or `cordon` and
   * `keys` (null, once applied).
   */
  | {
      readonly t: 'reply';
      readonly id: number;
      readonly value: readonly NodeView[] | KeyActivity | SeriesSnapshot | null;
    }
  /**
   * It listens on the shared port (`port`: the one bound, which --port 0 picks) and takes
   * WebSocket upgrades: the primary announces the proxy once every worker has said so.
   */
  | { readonly t: 'serving'; readonly port: number }
  | { readonly t: 'bye' }
  /** It could not start serving (a port it cannot bind): the primary stops the whole proxy. */
  | { readonly t: 'failed'; readonly message: string; readonly hint?: string };

/** Primary → worker. A worker leaving may close its channel between check and write: not an error. */
export function tellWorker(worker: Worker, message: PrimaryCommand): void {
  if (worker.isConnected()) worker.send(message, undefined, undefined, () => undefined);
}

/** Worker → primary; resolves once written (or at once when the primary is gone). */
export function tellPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (process.send === undefined || !process.connected) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });
}

/** The worker's end of the IPC channel (the process; a fake one in tests). */
export interface PrimaryChannel {
  on(event: 'message', listener: (message: PrimaryCommand) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
}

/**
 * A worker's inbox. It listens from the worker's first moment and queues what comes until
 * the worker has a handler: several messages can arrive in one read, and one emitted while
 * nobody listens is lost.
 */
export class PrimaryInbox {
  readonly #queue: PrimaryCommand[] = [];
  #handler: ((message: PrimaryCommand) => void) | undefined;
  #start: ((config: Config | undefined) => void) | undefined;
  #started = false;
  #workers = 1;

  /** How many workers the primary runs (from its `start` answer). */
  get workers(): number {
    return this.#workers;
  }

  constructor(channel: PrimaryChannel = process) {
    channel.on('message', (message) => this.#take(message));
    channel.on('disconnect', () => this.#start?.(undefined));
  }

  /**
   * The config to start with: asks with `hello` (through `send`) and resolves with the
   * primary's `start` answer — undefined when the primary goes away first.
   */
  start(send: (message: WorkerMessage) => unknown = tellPrimary): Promise<Config | undefined> {
    const started = new Promise<Config | undefined>((resolve) => (this.#start = resolve));
    send({ t: 'hello' });
    return started;
  }

  /** From now on every message goes to `handler`, the queued ones first. */
  handle(handler: (message: PrimaryCommand) => void): void {
    this.#handler = handler;
    for (const message of this.#queue.splice(0)) handler(message);
  }

  #take(message: PrimaryCommand): void {
    if (!this.#started) {
      if (message.t === 'start') {
        this.#started = true;
        this.#workers = message.workers ?? 1;
        this.#start?.(message.config);
      }
      // A reload before the start answer: the answer, built later, already holds it.
      else if (message.t !== 'reload') this.#queue.push(message);
      return;
    }
    if (this.#handler) this.#handler(message);
    else this.#queue.push(message);
  }
}
