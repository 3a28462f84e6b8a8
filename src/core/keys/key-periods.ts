/**
 * How client keys are named and split where processes share them (`--workers`, Redis
 * replicas): a key's usage is one more counter beside the nodes', `key:NAME`, with its own
 * billing day and the limits the processes divide between them.
 */
import { KEY_USAGE_PREFIX } from '../config/key-exposure.js';
import type { ClientKeyConfig } from '../config/key-types.js';
import type { PeriodNode } from '../quota/rollover.js';

/** The name a key's usage goes by in quotas.json and the shared ledger. */
export function keyUsageName(name: string): string {
  return `${KEY_USAGE_PREFIX}${name}`;
}

/**
 * A key as the processes that share it see it: its usage counter (its own billing day) and the
 * limits they split between them (undefined: none).
 */
export interface KeyCounter extends PeriodNode {
  readonly rpsLimit: number | undefined;
  readonly concurrentLimit: number | undefined;
  readonly perIpLimit: number | undefined;
}

/** The keys' counters and limits (each key has its own reset day). */
export function keyPeriods(
  keys: readonly Pick<
    ClientKeyConfig,
    'name' | 'resetDay' | 'rpsLimit' | 'maxConcurrent' | 'perIpRps'
  >[],
): KeyCounter[] {
  return keys.map((key) => ({
    name: keyUsageName(key.name),
    resetDay: key.resetDay,
    rpsLimit: key.rpsLimit,
    concurrentLimit: key.maxConcurrent,
    perIpLimit: key.perIpRps,
  }));
}
