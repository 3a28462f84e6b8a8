/**
 * Client keys' runtime changes across replicas on one Redis (issue 27): a revoke, un-revoke or
 * budget made through any replica's admin API is written to Redis by that replica's next sync
 * (the admin API answers once it is), and every other replica reads it at its own next sync —
 * in the same script call, so no request and no extra round trip ever waits on it. A replica
 * starting reads them in the syncs it makes before it serves. Redis back empty (or from an
 * older snapshot): the replicas write back what they hold, as they heal usage. Each replica
 * also keeps the book on disk (keys/key-changes-store.ts), so one restarted while Redis is
 * unreachable still holds the changes it had, and sends the ones Redis never took.
 */
import type { Logger } from 'pino';
import type { ClientKeys } from '../keys/client-keys.js';
import type {
  FleetChange,
  KeyOverride,
  OverridePush,
  OverrideReply,
} from '../keys/key-overrides.js';

/**
 * What else rides on every sync: client keys' runtime changes — what to write, and the
 * fleet's as Redis answered them.
 */
export interface OverrideChannel {
  outgoing(): OverridePush;
  /**
   * After a sync that sent `sent` succeeded (`reply` undefined: nothing was read), with
   * Redis's clock as it ran the sync.
   */
  incoming(sent: OverridePush, reply: OverrideReply | undefined, redisNow?: number): void;
}

/** What a change says in the log: the key's name and what changed, never its fingerprint. */
function describe({ field, value }: KeyOverride): Record<string, string | number | null> {
  const [kind, name] = field.split(':');
  if (kind === 'revoke') return { key: name ?? '', revoked: value === '1' ? 'yes' : 'no' };
  const at = value.indexOf('@');
  return { key: name ?? '', budget: at < 0 ? null : Number(value.slice(0, at)) };
}

/** How long the most precise reading of Redis's clock is kept over later, less precise ones. */
const CLOCK_SAMPLE_MS = 30_000;

/**
 * Redis's clock as this replica knows it: each sync's reading (Redis's time as it ran the
 * script) against the midpoint of the sync's round trip here, keeping the reading whose round
 * trip was shortest — a sync whose answer waited on a busy event loop says little about the
 * offset — unless it is older than CLOCK_SAMPLE_MS (clocks drift).
 */
class FleetClock {
  #best: { rtt: number; offset: number; at: number } | undefined;

  /** Takes a reading; returns the offset in force (Redis's clock minus this process's). */
  sample(redisNow: number, sentAt: number, receivedAt: number): number {
    const rtt = Math.max(0, receivedAt - sentAt);
    const offset = redisNow - (sentAt + receivedAt) / 2;
    const best = this.#best;
    if (best === undefined || rtt <= best.rtt || receivedAt - best.at > CLOCK_SAMPLE_MS)
      this.#best = { rtt, offset, at: receivedAt };
    return this.#best!.offset;
  }
}

/** A replica's clock this far from Redis's is said in the log (once, until it comes back). */
const CLOCK_WARN_MS = 1000;

/** Says what the fleet changed here; a field first read as the default changes nothing. */
function logChange(logger: Logger, change: FleetChange, madeHere: boolean): void {
  if (madeHere)
    logger.warn(
      { ...describe(change), was: change.before ?? null },
      'client key: a change made here lost to a newer one made elsewhere (changes are ordered by when they were made); the newer holds',
    );
  else if (change.before !== undefined || (change.value !== '0' && change.value !== '-'))
    logger.info(describe(change), 'client key: a runtime change from the fleet');
}

/**
 * Syncs `keys`' book of runtime changes with the fleet; `onChange` hears when the fleet's
 * changed one in force here (the primary of `--workers` hands it on to its workers).
 */
export function keyOverrideSync(
  keys: ClientKeys,
  logger: Logger,
  onChange: () => void = () => undefined,
  /** Called after a sync that sent changes or read the fleet's: the book may need saving. */
  onSynced: () => void = () => undefined,
): OverrideChannel {
  let warnedHealing = false;
  let warnedClock = false;
  /** When the sync now running was sent (this process's clock). */
  let sentAt = 0;
  const fleetClock = new FleetClock();
  return {
    outgoing() {
      sentAt = keys.wallClock();
      const push = keys.book.outgoing();
      // Fields written back (not changes made here): once per loss, not at every retry.
      const healing = push.fields.filter((field) => push.marks.get(field.field) === 0).length;
      if (healing > 0 && !warnedHealing)
        logger.warn(
          { fields: healing },
          'cluster: Redis lost client keys’ runtime changes (revokes, budgets); writing back the ones this replica holds',
        );
      warnedHealing = healing > 0;
      return push;
    },
    incoming(sent, reply, redisNow) {
      if (redisNow !== undefined && Number.isFinite(redisNow)) {
        const offset = fleetClock.sample(redisNow, sentAt, keys.wallClock());
        keys.alignToFleetClock(offset);
        const off = Math.abs(offset) > CLOCK_WARN_MS;
        if (off && !warnedClock)
          logger.warn(
            { offset_ms: Math.round(offset) },
            'cluster: this replica’s clock differs from Redis’s; client key changes are stamped on Redis’s time (keep clocks in sync: NTP)',
          );
        if (Math.abs(offset) < CLOCK_WARN_MS / 2) warnedClock = false;
        else if (off) warnedClock = true;
      }
      const changed = keys.book.merge(sent, reply);
      if (reply !== undefined || sent.fields.length > 0) onSynced();
      if (changed.length === 0) return;
      keys.refresh();
      // A change made here (not a field written back) that the fleet's newer one replaced.
      for (const change of changed)
        logChange(logger, change, (sent.marks.get(change.field) ?? 0) > 0);
      onChange();
    },
  };
}
