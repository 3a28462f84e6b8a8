/**
 * What a node's own errors taught about its eth_getLogs limits (issue 29): the most blocks it
 * serves in one query and the most logs it returns in one answer. Kept on the node, so it lives
 * as long as the node's name stays in the config (a reload keeps it) and is forgotten when the
 * node's URL changes (another endpoint, maybe another plan). A limit only ever goes down: a
 * node that once refused N blocks is not trusted with N again until then.
 */
import type { NodeConfig } from '../config/types.js';
import type { LogsLimitHint } from '../protocol/logs-limit-errors.js';

/** A node's learned eth_getLogs limits (undefined: nothing learned). */
export class LogsLimits {
  blockRange: number | undefined = undefined;
  results: number | undefined = undefined;

  /** Records what an error said; true when a limit went down (or was learned). */
  learn(hint: LogsLimitHint): boolean {
    let changed = false;
    if (hint.blockRange !== undefined && !(hint.blockRange >= (this.blockRange ?? Infinity))) {
      this.blockRange = hint.blockRange;
      changed = true;
    }
    if (hint.results !== undefined && !(hint.results >= (this.results ?? Infinity))) {
      this.results = hint.results;
      changed = true;
    }
    return changed;
  }

  /** Forgets everything (the node's URL changed). */
  clear(): void {
    this.blockRange = undefined;
    this.results = undefined;
  }
}

/** The configured block range: the node table's, else its price list's; undefined: none. */
export function configuredBlockRange(config: NodeConfig): number | undefined {
  return config.maxLogsBlockRange ?? config.pricing.maxLogsBlockRange;
}

/** The configured results cap: the node table's, else its price list's. */
export function configuredResults(config: NodeConfig): number | undefined {
  return config.maxLogsResults ?? config.pricing.maxLogsResults;
}

/** The most blocks a node takes in one eth_getLogs: configured or learned, the lower. */
export function blockRangeOf(config: NodeConfig, learned: LogsLimits): number | undefined {
  const configured = configuredBlockRange(config);
  const taught = learned.blockRange;
  if (configured === undefined) return taught;
  return taught === undefined ? configured : Math.min(configured, taught);
}
