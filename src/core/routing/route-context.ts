/** What the routing drivers need from the server, and how a routed request ends. */
import type { KeyRefusal } from '../keys/key-refusal.js';
import type { ChainMetrics, ProxyMetrics } from '../metrics.js';
import type { UpstreamStream } from '../node/upstream-stream.js';
import type { AttemptContext } from './attempt.js';
import type { PolicyTable } from './policy-table.js';
import type { RoutingTable } from './routing-table.js';

/** What routing needs from the server. */
export interface RouteContext extends AttemptContext {
  /** The current table; re-read at every round so a reload mid-request is seen. */
  readonly table: () => RoutingTable;
  readonly metrics: ProxyMetrics;
  /** The served chain's own recorders (rpc_chain_requests_total); absent: not counted per chain. */
  readonly chainMetrics?: ChainMetrics | undefined;
  /** Whole-request budget (1 s). */
  readonly budgetMs: number;
  /** Per-method strategies and write handling now in force; absent = cost for every method. */
  readonly policies?: () => PolicyTable;
  /** The chain's eth_getLogs settings (issue 29); absent = no client-facing range limit. */
  readonly logs?: LogsSettings;
}

/** What the operator allows a client's eth_getLogs (`max_logs_block_range`). */
export interface LogsSettings {
  /** Most blocks one client eth_getLogs may span; undefined = no limit. */
  readonly maxBlockRange?: number | undefined;
}

/** How a request ended. */
export type RouteResult =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string | undefined;
      /** The whole answer, or a large one still arriving (to pipe or abort). */
      readonly body: Buffer | UpstreamStream;
      readonly node: string;
      readonly attempts: number;
      readonly credits: number;
      /** How the response cache met it (absent: it did not). */
      readonly cache?: 'hit' | 'coalesced' | 'miss';
    }
  | {
      readonly kind: 'exhausted' | 'timeout';
      readonly attempts: number;
      readonly credits: number;
      /** A write that may have been delivered and is not retried: say so, not "all failed". */
      readonly unsure?: boolean;
    }
  /**
   * A client key check refused the call (core/serving/key-gate.ts): before routing, touching no
   * node (no `node`, 0 attempts, 0 credits) — or, for an answer over the key's
   * `max_answer_bytes`, after the node answered: that node, its attempts and credits.
   */
  | {
      readonly kind: 'refused';
      readonly refusal: KeyRefusal;
      readonly node?: string;
      readonly attempts: number;
      readonly credits: number;
    }
  /** Routing threw (a bug): the client must still be answered. */
  | {
      readonly kind: 'failed';
      readonly error: unknown;
      readonly attempts: number;
      readonly credits: number;
    };

/** Hears how a routed request ended, with the caller's token (so it need not be a closure). */
export type RouteCallback<T> = (result: RouteResult, token: T) => void;
