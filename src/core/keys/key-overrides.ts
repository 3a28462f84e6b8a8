/**
 * The operator's runtime changes to client keys — revoke, un-revoke, a budget set at runtime —
 * kept as a book of fields, each the last word on one thing:
 *
 *   revoke:NAME:FP  '1' revoked, '0' un-revoked: the secret of key NAME whose SHA-256 starts
 *                   with FP (16 hex digits)
 *   budget:NAME     'CREDITS@BASE': CREDITS per period while the config's monthly_credits is
 *                   still BASE ('-': none); '-': the config's budget again
 *
 * A revoke names the secret, so a rotation (same name, new secret) is not revoked and a revoked
 * secret put back in the config comes back revoked; a runtime budget names the budget it
 * replaced, so a config whose monthly_credits changed since wins over it.
 *
 * Each field carries a version: when its change was made, in wall-clock ms — and always above
 * every version the maker had seen, so a change is newer than anything it was made after,
 * whatever that process's clock says. The newest version wins everywhere (last writer by when
 * it wrote). With replicas the book is the fleet's, kept in Redis (cluster/redis-scripts.ts)
 * and synced by every replica: a sync writes each field this book holds newer than Redis — a
 * change made here, or one Redis lost or holds older (the replicas' memory heals a Redis that
 * came back empty, as their floors heal usage) — and takes every field Redis holds newer. So a
 * change that waited out an outage or a restart still loses to one made after it elsewhere.
 */

/** One field of the book as it travels: to a worker, or to and from Redis. */
export interface KeyOverride {
  readonly field: string;
  readonly value: string;
  /** When the change was made (wall-clock ms, above every version its maker had seen). */
  readonly version: number;
}

/** One field as the process keeps it across restarts (keys/key-changes-file.ts). */
export interface SavedOverride extends KeyOverride {
  /** A change made here that Redis has not taken yet (alone, every change stays pending). */
  readonly pending: boolean;
}

/** A field the fleet's book changed here, with the value it had before (undefined: none). */
export interface FleetChange extends KeyOverride {
  readonly before: string | undefined;
}

/** The whole book, as the primary hands it to its workers. */
export type KeyOverrides = readonly KeyOverride[];

/** What a sync sends: the book's clock as last read, and the fields to write. */
export interface OverridePush {
  /** The clock Redis last answered (0: never read); Redis answers its fields when it moved. */
  readonly seen: number;
  /** Fields Redis should hold: changes made here, and fields it lost or holds older. */
  readonly fields: readonly KeyOverride[];
  /** Which change of each field went (a field changed again meanwhile goes again). */
  readonly marks: ReadonlyMap<string, number>;
}

/** The fleet's book as a sync read it from Redis. */
export interface OverrideReply {
  /** The book's change counter in Redis (0: it holds none); moves at every write. */
  readonly clock: number;
  readonly fields: ReadonlyMap<string, { readonly version: number; readonly value: string }>;
}

interface Entry {
  value: string;
  version: number;
  /** > 0: a change made here, to send (its number); 0: nothing to send. */
  changed: number;
  /** Redis lost this field or holds it older: write it back under its version. */
  heal: boolean;
  /**
   * A change made here before this process had read Redis's clock: stamped on its own clock,
   * restamped on Redis's at the first sync (never below `floor`) before it is sent.
   */
  unaligned?: boolean;
  /** The least version the change may have: above every version seen when it was made. */
  floor?: number;
}

/** A change stamped further than this past Redis's clock was stamped by a clock ahead. */
const FUTURE_TOLERANCE_MS = 1000;

/** Digits of a key's SHA-256 that name its secret in a revoke (64 bits: no collision to fear). */
const FINGERPRINT_HEX = 16;

/** The field saying whether the secret `sha256` of key `name` is revoked. */
export function revokeField(name: string, sha256: string): string {
  return `revoke:${name}:${sha256.slice(0, FINGERPRINT_HEX)}`;
}

/** The field holding key `name`'s runtime budget. */
export function budgetField(name: string): string {
  return `budget:${name}`;
}

/** A runtime budget of `credits` over the config's `base` (undefined: back to the config's). */
export function budgetValue(credits: number | undefined, base: number | undefined): string {
  return credits === undefined ? '-' : `${credits}@${base ?? '-'}`;
}

/** The runtime budget `value` sets while the config's monthly_credits is `configured`. */
export function budgetOverride(
  value: string | undefined,
  configured: number | undefined,
): number | undefined {
  const at = value?.indexOf('@') ?? -1;
  if (value === undefined || at < 0) return undefined;
  return value.slice(at + 1) === String(configured ?? '-') ? Number(value.slice(0, at)) : undefined;
}

/** The runtime changes to keys one process holds (see the module comment). */
export class KeyOverrideBook {
  readonly #entries = new Map<string, Entry>();
  #changes = 0;
  /** Redis's change counter as last read (0: never; -1: read it at the next sync). */
  #seen = 0;
  /** The highest version this book has held: a change made here goes above it. */
  #highest = 0;
  /** Redis's clock minus this process's, once a sync has read it (undefined: not yet, or alone). */
  #offset: number | undefined = undefined;

  value(field: string): string | undefined {
    return this.#entries.get(field)?.value;
  }

  /**
   * A change made here at wall-clock `now` (ms): in force at once, sent at the next sync. Its
   * version is `now`, or just above the newest this book has seen if that is later (a clock
   * behind the fleet's still makes a change newer than the ones it follows).
   */
  set(field: string, value: string, now: number): void {
    const floor = this.#highest + 1;
    const version = Math.max(Math.floor(now + (this.#offset ?? 0)), floor);
    const unaligned = this.#offset === undefined;
    this.#hold(field, { value, version, changed: ++this.#changes, heal: false, unaligned, floor });
  }

  /**
   * Takes Redis's clock (`redisNow`, as this process's clock reads `now`); returns the
   * offset. From then on changes are stamped on Redis's clock, so replicas whose clocks
   * disagree still order their changes by when they were made. At the first reading, changes
   * made before it are restamped on Redis's clock, and a waiting change stamped past Redis's
   * clock (a clock ahead, before a restart) is brought back to it — before any is sent.
   */
  align(redisNow: number, now: number): number {
    const offset = redisNow - now;
    if (this.#offset === undefined) {
      for (const entry of this.#entries.values()) {
        if (entry.changed === 0) continue;
        if (entry.unaligned)
          entry.version = Math.max(Math.floor(entry.version + offset), entry.floor ?? 0);
        else if (entry.version > redisNow + FUTURE_TOLERANCE_MS)
          entry.version = Math.max(Math.floor(redisNow), entry.floor ?? 0);
        entry.unaligned = false;
      }
      this.#highest = Math.max(0, ...[...this.#entries.values()].map((entry) => entry.version));
    }
    this.#offset = offset;
    return offset;
  }

  /** Every field (to hand to a worker). */
  entries(): KeyOverrides {
    return [...this.#entries].map(([field, { value, version }]) => ({ field, value, version }));
  }

  /** Every field with whether it is still to send, in field order (what is saved to disk). */
  saved(): SavedOverride[] {
    return [...this.#entries]
      .map(([field, { value, version, changed }]) => ({
        field,
        value,
        version,
        pending: changed > 0,
      }))
      .sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  }

  /**
   * Takes the book this process saved before a restart: a change still to send goes at the
   * next sync (and loses there to any newer one the fleet made meanwhile); the fleet's book is
   * read at that sync whatever its counter, so a Redis that lost these gets them back.
   */
  restore(saved: readonly SavedOverride[]): void {
    this.#entries.clear();
    this.#seen = saved.length > 0 ? -1 : 0;
    for (const { field, value, version, pending } of saved)
      this.#hold(field, { value, version, changed: pending ? ++this.#changes : 0, heal: false });
  }

  /** Takes another process's whole book (a worker takes the primary's). */
  replace(overrides: KeyOverrides): void {
    this.#entries.clear();
    for (const { field, value, version } of overrides)
      this.#hold(field, { value, version, changed: 0, heal: false });
  }

  /** What the next sync sends: the changes made here and the fields Redis must get back. */
  outgoing(): OverridePush {
    const fields: KeyOverride[] = [];
    const marks = new Map<string, number>();
    for (const [field, entry] of this.#entries) {
      if (entry.changed === 0 && !entry.heal) continue;
      // A change made here waits for the first reading of Redis's clock (see `align`).
      if (entry.changed > 0 && this.#offset === undefined) continue;
      fields.push({ field, value: entry.value, version: entry.version });
      marks.set(field, entry.changed);
    }
    return { seen: this.#seen, fields, marks };
  }

  /**
   * Redis's answer to a sync that sent `sent` (`reply` undefined: its counter had not moved
   * and nothing was sent, so it read nothing). Returns the fields whose value the fleet changed
   * here — a change made here that a newer one beat among them.
   */
  merge(sent: OverridePush, reply: OverrideReply | undefined): FleetChange[] {
    for (const [field, mark] of sent.marks) {
      const entry = this.#entries.get(field);
      // A field changed again while the sync ran goes again next time.
      if (entry !== undefined && entry.changed === mark) {
        entry.changed = 0;
        entry.heal = false;
      }
    }
    if (reply === undefined) return [];
    const changed: FleetChange[] = [];
    for (const [field, theirs] of reply.fields) {
      const ours = this.#entries.get(field);
      if (ours !== undefined && ours.changed > 0) continue;
      // Newer wins; at the same version (two changes in one millisecond) Redis's word does.
      const newer =
        ours === undefined ||
        theirs.version > ours.version ||
        (theirs.version === ours.version && theirs.value !== ours.value);
      if (newer) {
        if (ours?.value !== theirs.value) changed.push({ field, ...theirs, before: ours?.value });
        this.#hold(field, { ...theirs, changed: 0, heal: false });
      } else if (theirs.version < ours.version) ours.heal = true;
    }
    // Never read as "gone": a field Redis does not hold is one it lost.
    for (const [field, ours] of this.#entries)
      if (ours.changed === 0 && !reply.fields.has(field)) ours.heal = true;
    this.#seen = reply.clock;
    return changed;
  }

  #hold(field: string, entry: Entry): void {
    this.#entries.set(field, entry);
    if (entry.version > this.#highest) this.#highest = entry.version;
  }
}
