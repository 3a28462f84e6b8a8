/**
 * What a subscription's clients may be sent: no notification twice, and slot-like streams
 * never backwards. The rules apply all the time, and they are what makes a failover invisible:
 * the node taken over from and the one moved to overlap, and a back-fill overlaps both.
 *
 *   slot, root, block            its slot only ever increases
 *   account                      not older than the newest slot; a (slot, value) once
 *   slotsUpdates                 per update type, the slot only ever increases
 *   program, logs                not older than the newest slot; (slot, pubkey) / signature once
 *   vote, pendingTransactions    each signature / hash once
 *   signature                    one "receivedSignature", then one final notification
 *   newHeads                     each block hash once
 *   evmLogs                      each (blockHash, logIndex, removed) once
 */
import type { StreamKind } from './subscription-methods.js';

/** Keys remembered for de-duplication: far more than one failover's overlap. */
const RECENT = 4096;

/** A bounded set: the oldest key is forgotten first. */
class RecentSet {
  readonly #keys = new Set<string>();

  /** Adds `key`; false when it was already there. */
  add(key: string): boolean {
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    if (this.#keys.size > RECENT) this.#keys.delete(this.#keys.values().next().value!);
    return true;
  }
}

type Json = Record<string, unknown>;

function field(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Json)[key];
  }
  return at;
}

function numberAt(value: unknown, ...path: string[]): number | undefined {
  const at = field(value, ...path);
  if (typeof at === 'number') return at;
  if (typeof at === 'string' && /^0x[0-9a-fA-F]+$/.test(at)) return Number.parseInt(at, 16);
  return undefined;
}

/** The ordering and de-duplication state of one stream. */
export class StreamFilter {
  /** Slot-like streams: the newest slot sent; newHeads / evmLogs: the newest block number. */
  last: number | undefined = undefined;
  /** Signature streams: the final notification went out (the stream is over). */
  finished = false;
  #received = false;
  readonly #recent = new RecentSet();
  readonly #perType = new Map<string, number>();

  constructor(readonly kind: StreamKind) {}

  /** True when `result` goes to clients; records it. */
  admit(result: unknown): boolean {
    switch (this.kind) {
      case 'slot':
        return this.#increasing(numberAt(result, 'slot'));
      case 'root':
        return this.#increasing(typeof result === 'number' ? result : undefined);
      case 'block':
        return this.#increasing(numberAt(result, 'context', 'slot'));
      case 'account':
        return this.#notOlder(
          result,
          `${String(numberAt(result, 'context', 'slot'))}:${JSON.stringify(field(result, 'value'))}`,
        );
      case 'slotsUpdates':
        return this.#increasingPerType(String(field(result, 'type')), numberAt(result, 'slot'));
      case 'program':
        return this.#notOlder(
          result,
          `${String(numberAt(result, 'context', 'slot'))}:${String(field(result, 'value', 'pubkey'))}`,
        );
      case 'logs':
        return this.#notOlder(result, String(field(result, 'value', 'signature')));
      case 'vote':
        return this.#recent.add(String(field(result, 'signature')));
      case 'pendingTransactions':
        return this.#recent.add(typeof result === 'string' ? result : JSON.stringify(result));
      case 'signature':
        return this.#signature(result);
      case 'newHeads':
        return this.#block(numberAt(result, 'number'), String(field(result, 'hash')));
      case 'evmLogs': {
        const key = `${String(field(result, 'blockHash'))}:${String(field(result, 'logIndex'))}:${String(field(result, 'removed'))}`;
        return this.#block(numberAt(result, 'blockNumber'), key);
      }
      case 'syncing':
        return true;
    }
  }

  #increasing(slot: number | undefined): boolean {
    if (slot === undefined) return true;
    if (this.last !== undefined && slot <= this.last) return false;
    this.last = slot;
    return true;
  }

  #increasingPerType(type: string, slot: number | undefined): boolean {
    if (slot === undefined) return true;
    const last = this.#perType.get(type);
    if (last !== undefined && slot <= last) return false;
    this.#perType.set(type, slot);
    if (this.last === undefined || slot > this.last) this.last = slot;
    return true;
  }

  #notOlder(result: unknown, key: string): boolean {
    const slot = numberAt(result, 'context', 'slot');
    if (slot !== undefined && this.last !== undefined && slot < this.last) return false;
    if (!this.#recent.add(key)) return false;
    if (slot !== undefined && (this.last === undefined || slot > this.last)) this.last = slot;
    return true;
  }

  #signature(result: unknown): boolean {
    if (this.finished) return false;
    if (field(result, 'value') === 'receivedSignature') {
      if (this.#received) return false;
      this.#received = true;
      return true;
    }
    this.finished = true;
    return true;
  }

  #block(number: number | undefined, key: string): boolean {
    if (!this.#recent.add(key)) return false;
    if (number !== undefined && (this.last === undefined || number > this.last)) this.last = number;
    return true;
  }
}
