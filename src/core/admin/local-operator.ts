/**
 * The operator's handle on one serving process: its nodes' rows, sampled activity, cordons
 * and events. A worker of `--workers N` runs one too, answering the primary.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { Topology } from '../routing/topology.js';
import type { ReloadOutcome } from '../service-reload.js';
import { ActivityWindow } from './activity-window.js';
import { chainParts } from './chain-views.js';
import { nodeViews, type NodeView } from './node-view.js';
import { EventLog, type NodesDocument, type Operator } from './operator.js';

/** How often node activity is sampled (the rows' requests/s is over one sample). */
export const ACTIVITY_SAMPLE_MS = 1000;

/** One process's operator handle. */
export class LocalOperator implements Operator {
  readonly #activity = new ActivityWindow();
  readonly events: EventLog;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly topology: Topology,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly reloader: () => ReloadOutcome,
    /** The config in force (its chains and accounts); absent: node rows only. */
    private readonly config?: () => Pick<Config, 'chains' | 'accounts'>,
  ) {
    this.events = new EventLog(() => clock.wallNow());
    this.sample();
    this.#timer = setInterval(() => this.sample(), ACTIVITY_SAMPLE_MS);
    this.#timer.unref();
  }

  /** Takes this second's activity sample (the timer calls it; tests may too). */
  sample(): void {
    const all = this.topology.table.all;
    for (const node of all) this.#activity.sample(node.name, node);
    this.#activity.retain(new Set(all.map((node) => node.name)));
  }

  /** This process's rows. */
  views(): NodeView[] {
    return nodeViews(this.topology, this.clock, this.#activity);
  }

  nodes(): Promise<NodesDocument> {
    const now = new Date(this.clock.wallNow());
    const rows = this.views();
    const used = (name: string) => this.topology.account(name)?.usage.used ?? 0;
    return Promise.resolve({
      source: 'server',
      pid: process.pid,
      generated_at: now.toISOString(),
      workers: 1,
      nodes: rows,
      ...(this.config === undefined ? {} : chainParts(this.config(), rows, used, now)),
      events: this.events.list(),
    });
  }

  cordon(name: string, on: boolean): Promise<boolean> {
    return Promise.resolve(this.apply(name, on, true));
  }

  /** Sets a node's cordon; false when there is no such node. `log`: this process tells. */
  apply(name: string, on: boolean, log: boolean): boolean {
    const node = this.topology.node(name);
    if (node === undefined) return false;
    if (node.cordoned === on) return true;
    node.cordoned = on;
    if (log) logCordon(this.logger, this.events, name, on);
    return true;
  }

  /** Hears a node's penalty (seconds) or recovery (0) from the router. */
  nodeHealth(name: string, seconds: number): void {
    if (seconds === 0) this.events.add(name, 'recovered');
    else this.events.add(name, 'penalized', this.topology.node(name)?.penaltyReason || null);
  }

  reload(): ReloadOutcome {
    return this.reloader();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** The log line and event of a cordon change. */
export function logCordon(logger: Logger, events: EventLog, name: string, on: boolean): void {
  if (on) logger.warn({ node: name }, 'node cordoned: no new requests until uncordon or restart');
  else logger.info({ node: name }, 'node uncordoned: back in rotation');
  events.add(name, on ? 'cordoned' : 'uncordoned');
}
