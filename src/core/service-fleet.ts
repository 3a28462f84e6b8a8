/**
 * The fleet link: when replicas share limits and usage through Redis (`[cluster] redis_url`),
 * this service joins them — its shares of every limit applied to `target` (the proxy's nodes,
 * or the primary's worker hub), the fleet's usage kept in the shared ledger, and client keys'
 * runtime changes (revoke, budget) the fleet's.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { OverrideChannel } from './cluster/key-override-sync.js';
import { RedisCoordinator, type ShareTarget } from './cluster/redis-coordinator.js';
import { RedisStore } from './cluster/redis-store.js';
import type { FleetKeyLink } from './admin/key-routes.js';
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
  /** Client keys' runtime changes, synced with the fleet's. */
  overrides?: OverrideChannel,
): Promise<RedisCoordinator | undefined> {
  if (usage.shared === undefined || cluster === undefined) return undefined;
  let lastError = '';
  const store = await RedisStore.connect(cluster, (err) => {
    // One line per distinct error, not one per reconnect attempt.
    if (err.message === lastError) return;
    lastError = err.message;
    logger.warn({ err: err.message, redis: cluster.redactedRedisUrl }, 'cluster: Redis error');
  });
  const coordinator = new RedisCoordinator(
    store,
    cluster,
    target(),
    usage.shared,
    clock,
    logger,
    overrides,
  );
  await coordinator.start();
  logger.info(
    { redis: cluster.redactedRedisUrl, replica: cluster.replicaId, prefix: cluster.keyPrefix },
    'cluster: sharing limits and usage with the replicas in Redis',
  );
  return coordinator;
}

/** The longest the admin API waits for Redis to take a key's change (the CLI waits 2 s). */
const PUBLISH_WAIT_MS = 1500;

/** How the admin API hands client keys' changes to the fleet (undefined: this machine alone). */
export function fleetKeyLink(
  coordinator: () => RedisCoordinator | undefined,
  cluster: ClusterConfig | undefined,
): FleetKeyLink | undefined {
  if (cluster?.redisUrl === undefined) return undefined;
  return {
    publish: () => {
      const synced = coordinator()?.nextSync() ?? Promise.resolve(false);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), PUBLISH_WAIT_MS);
      });
      return Promise.race([synced, late]).finally(() => clearTimeout(timer));
    },
    withinMs: cluster.syncIntervalMs,
  };
}
