/** Log lines the single process and the primary of `--workers` share. */
import type { Logger } from 'pino';
import type { NodeConfig } from './config/types.js';
import type { RolloverEvent } from './quota/rollover.js';
import { wsUrlOf } from './ws/ws-url.js';

/** Logs billing-period resets (startup and flush ticks). */
export function logRollover(logger: Logger, events: readonly RolloverEvent[]): void {
  for (const event of events) {
    if (event.kind !== 'reset') continue;
    const fields = {
      node: event.name,
      from: event.from,
      to: event.to,
      used_before: event.usedBefore,
    };
    if (event.longGap)
      logger.warn(fields, `billing period reset after ${event.gapDays} days without a flush`);
    else logger.info(fields, 'billing period reset');
  }
}

/** Logs one line per node (URLs redacted). */
export function logNodes(nodes: readonly NodeConfig[], logger: Logger): void {
  const limit = (value: number) => (value === Infinity ? null : value);
  for (const node of nodes) {
    logger.info(
      {
        node: node.name,
        tier: node.tier,
        rps_limit: limit(node.rpsLimit),
        max_concurrent: limit(node.maxConcurrent),
        monthly_limit: node.monthlyLimit ?? 'unmetered',
        url: node.redactedUrl,
        ws_url: wsUrlOf(node).redacted,
      },
      'node',
    );
  }
}
