/**
 * What the operator's routes act on, and the recent events they show. One process implements
 * it over its own nodes (local-operator.ts); the primary of several workers over theirs
 * (service-primary.ts).
 */
import type { ReloadOutcome } from '../service-reload.js';
import type { ChainParts } from './chain-views.js';
import type { NodeView } from './node-view.js';

/** Something an operator wants to hear of: a penalty, a recovery, a cordon. */
export interface AdminEvent {
  /** ISO time. */
  readonly at: string;
  readonly node: string;
  readonly kind: 'penalized' | 'recovered' | 'cordoned' | 'uncordoned';
  /** Why (a penalty's reason), or how long (a recovery). */
  readonly detail: string | null;
}

/** GET /admin/nodes (`chains` with `[[chains]]`, `accounts` with `[[accounts]]`). */
export interface NodesDocument extends ChainParts {
  readonly source: 'server';
  readonly pid: number;
  readonly generated_at: string;
  /** Processes serving requests (1, or the workers of `--workers N`). */
  readonly workers: number;
  readonly nodes: readonly NodeView[];
  /** The most recent events, oldest first. */
  readonly events: readonly AdminEvent[];
}

/** The operator's handle on a running proxy. */
export interface Operator {
  nodes(): Promise<NodesDocument>;
  /**
   * Cordons (`on`) or uncordons node `name`; resolves once no new request can be admitted to
   * it (every worker has applied it) — false when there is no such node.
   */
  cordon(name: string, on: boolean): Promise<boolean>;
  /** The same as SIGHUP. */
  reload(): ReloadOutcome;
}

/** How many events the log keeps. */
const MAX_EVENTS = 50;

/** The most recent events, bounded. */
export class EventLog {
  readonly #events: AdminEvent[] = [];

  constructor(private readonly wallNow: () => number) {}

  add(node: string, kind: AdminEvent['kind'], detail: string | null = null): void {
    this.#events.push({ at: new Date(this.wallNow()).toISOString(), node, kind, detail });
    if (this.#events.length > MAX_EVENTS) this.#events.shift();
  }

  list(): readonly AdminEvent[] {
    return [...this.#events];
  }
}
