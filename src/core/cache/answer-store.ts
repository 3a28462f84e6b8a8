/**
 * The stored answers: a Map in least-recently-used order (a hit moves its entry to the end)
 * bounded by bytes. Each answer is copied into a buffer of its own so that a small answer never
 * keeps a larger network buffer alive, and the bound is what the store really holds.
 */
import type { Span } from '../protocol/json-spans.js';

/**
 * Bytes counted per entry on top of its answer and key: the Map slot, the entry object and the
 * Buffer's own header. Measured on Node 20 (x64) at about 200; rounded up so the bound holds.
 */
export const ENTRY_OVERHEAD_BYTES = 256;

/** One stored answer: the upstream's bytes and where its `id` sits in them. */
export interface StoredAnswer {
  readonly body: Buffer;
  readonly idSpan: Span;
  readonly contentType: string;
  readonly method: string;
  /** Monotonic ms after which it is not served; Infinity for final answers. */
  readonly expiresAt: number;
  /** Bytes counted against the bound. */
  readonly size: number;
}

/** A byte-bounded LRU of answers keyed by method and canonical params. */
export class AnswerStore {
  readonly #entries = new Map<string, StoredAnswer>();
  #bytes = 0;

  constructor(private maxBytes: number) {}

  /** Bytes held (answers, keys and the per-entry overhead). */
  get bytes(): number {
    return this.#bytes;
  }

  get entries(): number {
    return this.#entries.size;
  }

  /** The live answer for `key`, refreshed as most recently used; expired ones are dropped. */
  get(key: string, now: number): StoredAnswer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= now) {
      this.#bytes -= entry.size;
      return undefined;
    }
    this.#entries.set(key, entry);
    return entry;
  }

  /** Stores a copy of `body` under `key`, evicting the least recently used past the bound. */
  set(
    key: string,
    method: string,
    body: Uint8Array,
    idSpan: Span,
    contentType: string,
    expiresAt: number,
  ): void {
    const size = body.length + key.length + ENTRY_OVERHEAD_BYTES;
    if (size > this.maxBytes) return;
    const copy = Buffer.allocUnsafeSlow(body.length);
    copy.set(body);
    this.#remove(key);
    this.#entries.set(key, { body: copy, idSpan, contentType, method, expiresAt, size });
    this.#bytes += size;
    this.#evict();
  }

  /** Applies a new bound (a smaller one evicts at once). */
  resize(maxBytes: number): void {
    this.maxBytes = maxBytes;
    this.#evict();
  }

  /** Drops every entry whose method `drop` names (a reload changed their rule). */
  dropMethods(drop: (method: string) => boolean): void {
    for (const [key, entry] of this.#entries) if (drop(entry.method)) this.#remove(key);
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.size;
  }

  #evict(): void {
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.maxBytes) return;
      this.#entries.delete(key);
      this.#bytes -= entry.size;
    }
  }
}
