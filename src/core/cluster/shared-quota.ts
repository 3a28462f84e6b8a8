/**
 * `cascade quota show|reset` against the fleet's usage in Redis, when no server of this
 * machine holds the quotas file: read, or reset, each node's key of its current period.
 */
import { accountEntries } from '../config/config-chains.js';
import type { Config } from '../config/types.js';
import { keyPeriods } from '../keys/key-periods.js';
import type { PeriodNode } from '../quota/rollover.js';
import { CascadeError } from '../errors.js';
import { periodStart, utcDay } from '../quota/billing-period.js';
import { RedisStore, whenConnected } from './redis-store.js';

function periods(nodes: readonly PeriodNode[], today: Date) {
  const day = utcDay(today);
  return nodes.map((node) => ({ name: node.name, period: periodStart(day, node.resetDay) }));
}

async function withStore<T>(config: Config, use: (store: RedisStore) => Promise<T>): Promise<T> {
  const cluster = config.cluster!;
  let failure = '';
  const store = await RedisStore.connect(cluster, (err) => (failure = err.message));
  try {
    if (!(await whenConnected(store, Math.max(cluster.redisTimeoutMs, 2000)))) {
      throw new CascadeError(
        'REDIS_UNREACHABLE',
        `cannot reach Redis at ${cluster.redactedRedisUrl}${failure ? `: ${failure}` : ''}`,
        'the fleet’s usage lives there: start Redis, or check cluster.redis_url',
      );
    }
    return await use(store);
  } finally {
    store.close();
  }
}

/**
 * The fleet's usage of every node in its current period, by name — and of every provider
 * account's pool (`account:NAME`) and client key (`key:NAME`), shared by the replicas as the
 * nodes' usage is.
 */
export function readSharedUsage(
  config: Config,
  today: Date,
): Promise<Map<string, { used: number; periodStart: string }>> {
  return withStore(config, async (store) => {
    const nodes = periods(
      [...config.nodes, ...accountEntries(config), ...keyPeriods(config.keys?.keys ?? [])],
      today,
    );
    const used = await store.read(nodes);
    return new Map(
      nodes.map((node, i) => [node.name, { used: used[i]!, periodStart: node.period }]),
    );
  });
}

/**
 * The fleet's runtime changes to client keys (revokes, budgets set with `cascade key budget`),
 * as key-overrides.ts names its fields: what every replica applies at its next sync.
 */
export function readSharedKeyChanges(config: Config): Promise<Map<string, string>> {
  return withStore(config, (store) => store.readKeyChanges());
}

/**
 * Zeroes the fleet's usage of `names` — nodes, accounts' pools as `account:NAME` and client
 * keys as `key:NAME` (every replica sees it at its next sync).
 */
export function resetSharedUsage(
  config: Config,
  names: readonly string[],
  today: Date,
): Promise<void> {
  const entries = [
    ...config.nodes,
    ...accountEntries(config),
    ...keyPeriods(config.keys?.keys ?? []),
  ];
  return withStore(config, (store) =>
    store.reset(
      periods(
        entries.filter((entry) => names.includes(entry.name)),
        today,
      ),
    ),
  );
}
