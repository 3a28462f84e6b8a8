/**
 * The operator's handle on `cascade serve --workers N`, held by the primary: it owns the
 * cordons (every worker applies them; a restarted worker gets them with its first state) and
 * the event log, and answers GET /admin/nodes for the whole proxy from its workers' rows.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { accountUsageName } from '../config/accounts-section.js';
import type { Config, NodeConfig } from '../config/types.js';
import type { ReloadOutcome } from '../service-reload.js';
import { chainParts } from './chain-views.js';
import { logCordon } from './local-operator.js';
import { mergeNodeViews, type NodeView } from './node-view.js';
import { EventLog, type NodesDocument, type Operator } from './operator.js';

/** What the fleet operator needs from the primary. */
export interface FleetDeps {
  readonly nodes: () => readonly NodeConfig[];
  /** The config in force (its chains and accounts); absent: node rows only. */
  readonly config?: () => Pick<Config, 'chains' | 'accounts'>;
  /** The proxy's usage of a node or an account's pool (`account:NAME`; the primary's ledger). */
  readonly used: (name: string) => number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly reload: () => ReloadOutcome;
  /** Every live worker's rows (those that answered in time). */
  readonly workerViews: () => Promise<ReadonlyArray<readonly NodeView[]>>;
  /** Tells every live worker the cordons; resolves once they applied them. */
  readonly applyCordons: (cordoned: readonly string[]) => Promise<void>;
}

/** The primary's operator handle. */
export class FleetOperator implements Operator {
  readonly #cordoned = new Set<string>();
  readonly events: EventLog;

  constructor(private readonly deps: FleetDeps) {
    this.events = new EventLog(() => deps.clock.wallNow());
  }

  /** The cordoned node names (sent to the workers with every state). */
  get cordoned(): readonly string[] {
    return [...this.#cordoned];
  }

  async nodes(): Promise<NodesDocument> {
    const workers = await this.deps.workerViews();
    const now = new Date(this.deps.clock.wallNow());
    const rows = mergeNodeViews(this.deps.nodes(), workers, this.#cordoned, this.deps.used, now);
    const used = (name: string) => this.deps.used(accountUsageName(name));
    const config = this.deps.config;
    return {
      source: 'server',
      pid: process.pid,
      generated_at: now.toISOString(),
      workers: workers.length,
      nodes: rows,
      ...(config === undefined ? {} : chainParts(config(), rows, used, now)),
      events: this.events.list(),
    };
  }

  async cordon(name: string, on: boolean): Promise<boolean> {
    if (!this.deps.nodes().some((node) => node.name === name)) return false;
    if (this.#cordoned.has(name) !== on) {
      if (on) this.#cordoned.add(name);
      else this.#cordoned.delete(name);
      logCordon(this.deps.logger, this.events, name, on);
    }
    await this.deps.applyCordons(this.cordoned);
    return true;
  }

  /** Forgets cordons of nodes a reload removed (a node added back later starts in rotation). */
  retain(): void {
    const names = new Set(this.deps.nodes().map((node) => node.name));
    for (const name of this.#cordoned) if (!names.has(name)) this.#cordoned.delete(name);
  }

  /** Penalties and recoveries workers reported: [node, seconds], 0 = recovered. */
  penalties(reported: ReadonlyArray<readonly [string, number]>): void {
    for (const [name, seconds] of reported) {
      if (seconds === 0) this.events.add(name, 'recovered');
      else this.events.add(name, 'penalized', `${seconds} s`);
    }
  }

  reload(): ReloadOutcome {
    return this.deps.reload();
  }
}
