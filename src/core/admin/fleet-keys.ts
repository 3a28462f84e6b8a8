/**
 * Client keys as the primary of `--workers N` holds them: its own copy of the keys in force,
 * whose usage is the primary's ledger (what every worker books into, and quotas.json is written
 * from), and the workers that serve them. An operator's change (revoke, budget) is made on the
 * copy, then handed whole to every worker, and the admin API answers once each has applied it
 * (and, with replicas on Redis, once Redis has it); the calls per key are the workers' own,
 * asked and summed.
 */
import type { FleetKeyLink, KeyAdmin } from './key-routes.js';
import type { ClientKeys } from '../keys/client-keys.js';
import type { KeyOverrides } from '../keys/key-overrides.js';
import { sumActivity, type KeyActivity } from '../keys/key-activity.js';

/** How the primary reaches its live workers (one question each, answers in arrival order). */
export interface WorkerKeyChannel {
  /** Sends the keys' runtime changes to every worker; resolves with their acknowledgements. */
  tellOverrides(overrides: KeyOverrides): Promise<unknown[]>;
  /** Asks every worker for its calls per key. */
  askActivity(): Promise<unknown[]>;
}

/** The key routes' view of the primary's keys and its workers (and, with replicas, the fleet). */
export function fleetKeyAdmin(
  keys: ClientKeys,
  workers: WorkerKeyChannel,
  fleet?: FleetKeyLink,
  /** Writes the keys' runtime changes to disk (the primary keeps them for every worker). */
  persist?: () => Promise<void>,
): KeyAdmin {
  return {
    keys,
    fleet,
    ...(persist === undefined ? {} : { persist }),
    async activity() {
      return sumActivity((await workers.askActivity()) as KeyActivity[]);
    },
    async spread() {
      await workers.tellOverrides(keys.overrides());
    },
  };
}
