/**
 * A worker's side of client keys under `--workers N`: each key's usage is a counter in the
 * ledger the worker syncs with the primary (so all workers spend one budget, booked in the
 * primary's ledger and quotas.json), each key's demand goes in the worker's report and its
 * share of the key's limits comes back with the nodes' shares, and the operator's runtime
 * changes (revoke, budget) arrive from the primary, which answers the admin API.
 */
import type { ClientKeys } from '../keys/client-keys.js';
import { keyActivity } from '../keys/key-activity.js';
import type { SharedUsageLedger } from '../quota/shared-usage-ledger.js';
import type { Topology } from '../routing/topology.js';
import type { WorkerShare } from './worker-hub.js';
import type { PrimaryCommand, WorkerMessage } from './worker-messages.js';

/**
 * Counts the keys' usage in the ledger synced with the primary (which resets it, never a
 * worker), and takes this worker's share of each address's failed-check allowance.
 */
export function shareKeysWithPrimary(
  keys: ClientKeys,
  ledger: SharedUsageLedger,
  workers: number,
): void {
  // Connections from one address reach the workers in turn: each allows its share of failures.
  keys.splitFailedChecks(workers);
  keys.shareUsage(ledger, () =>
    Promise.reject(new Error('the primary resets key usage, not a worker')),
  );
}

/** Adds every limited key's demand since the last report to `demand` (by usage name). */
export function addKeyDemand(
  keys: ClientKeys,
  demand: Record<string, readonly [number, number]>,
): void {
  for (const [name, wanted] of keys.demands()) demand[name] = [wanted.rps, wanted.concurrent];
}

/** Applies one share from the primary's answer: a node's, or a key's (`key:NAME`). */
export function applyWorkerShare(
  topology: Topology,
  keys: ClientKeys,
  name: string,
  [rps, concurrent, perIp]: WorkerShare,
  now: number,
): void {
  // A node's or a provider account's limits (`account:NAME`), else a client key's.
  const limited = topology.limited(name);
  if (limited !== undefined) limited.setShare(rps ?? Infinity, concurrent ?? Infinity, now);
  else
    keys.applyShare(name, {
      rps: rps ?? Infinity,
      concurrent: concurrent ?? Infinity,
      perIp: perIp ?? Infinity,
    });
}

/**
 * Handles the primary's key messages — the runtime changes (`keys`) and the question for this
 * worker's calls per key (`keyview`) — answering through `reply`; false for other messages.
 */
export function handleKeyCommand(
  keys: ClientKeys,
  message: PrimaryCommand,
  reply: (message: WorkerMessage) => unknown,
): boolean {
  if (message.t === 'keys') {
    keys.applyOverrides(message.overrides);
    if (message.id !== undefined) reply({ t: 'reply', id: message.id, value: null });
    return true;
  }
  if (message.t === 'keyview') {
    reply({ t: 'reply', id: message.id, value: keyActivity(keys) });
    return true;
  }
  return false;
}
