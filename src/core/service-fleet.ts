/**
 * The fleet link: when replicas share limits and usage through Redis (`[cluster] redis_url`),
 * this service joins them — its shares of every limit applied to `target` (the proxy's nodes,
 * or the primary's worker hub), the fleet's usage kept in the shared ledger.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { RedisCoordinator, type ShareTarget } from './cluster/redis-coordinator.js';
import { RedisStore } from './cluster/redis-store.js';
import type { ClusterConfig } from './config/types.js';
import type { UsageStore } from './service-usage.js';

/**
 * Joins the fleet when the usage store is shared; undefined when this machine is alone.
 * Resolves once it has its shares, or — Redis unreachable for the lease — its fallback shares.
 */
export async function linkFleet(
  usage: UsageStore,
  cluster: ClusterConfig | undefined,
  /** Built only when the fleet is joined. */
  target: () => ShareTarget,
  clock: Clock,
  logger: Logger,
): Promise<RedisCoordinator | undefined> {
  if (usage.shared === undefined || cluster === undefined) return undefined;
  let lastError = '';
  const store = await RedisStore.connect(cluster, (err) => {
    // One line per distinct error, not one per reconnect attempt.
    if (err.message === lastError) return;
    lastError = err.message;
    logger.warn({ err: err.message, redis: cluster.redactedRedisUrl }, 'cluster: Redis error');
  });
  const coordinator = new RedisCoordinator(store, cluster, target(), usage.shared, clock, logger);
  await coordinator.start();
  logger.info(
    { redis: cluster.redactedRedisUrl, replica: cluster.replicaId, prefix: cluster.keyPrefix },
    'cluster: sharing limits and usage with the replicas in Redis',
  );
  return coordinator;
}
