/**
 * A replica's Redis store for the in-process Redis tests, whose syncs run only when the test
 * moves the hand-driven clock: `trySync` advances one interval, waits for the sync that
 * caused and says whether it reached Redis. `trySync(0)` runs only an early sync a booking
 * asked for (due at the clock's next turn), without time passing.
 */
import type { ManualClock } from '../../src/core/clock.js';
import { RedisStore, whenConnected } from '../../src/core/cluster/redis-store.js';
import type { ClusterConfig } from '../../src/core/config/types.js';

/** The store to hand the coordinator, and the one sync step. */
export interface SteppedStore {
  readonly store: RedisStore;
  /** One interval on `clock` (or `ms`): the sync it starts, true when it reached Redis. */
  readonly trySync: (ms?: number) => Promise<boolean>;
}

/** Connects to `cluster`'s Redis and watches the coordinator's syncs through the store. */
export async function steppedStore(
  cluster: ClusterConfig,
  clock: ManualClock,
): Promise<SteppedStore> {
  const inner = await RedisStore.connect(cluster, () => undefined);
  if (!(await whenConnected(inner, 5000)))
    throw new Error(`Redis at ${cluster.redisUrl} did not connect`);
  let last: Promise<unknown> = Promise.resolve();
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === 'sync')
        return (...args: Parameters<RedisStore['sync']>) => (last = target.sync(...args));
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
  return {
    store,
    trySync: async (ms = cluster.syncIntervalMs) => {
      const before = last;
      clock.advance(ms);
      if (last === before) throw new Error('the coordinator did not sync');
      const ok = await last.then(
        () => true,
        () => false,
      );
      // The coordinator's own continuation (settle, acknowledge) runs before the next step.
      await new Promise((resolve) => setImmediate(resolve));
      return ok;
    },
  };
}
