import { EVM_METHODS, SOLANA_METHODS } from './standard-methods.js';

/** Id returned for a method name nobody has interned. */
export const UNKNOWN_METHOD_ID = -1;

/**
 * Interns method names to small integer ids so a price is one array load. Standard names come
 * first (ids 0..standardCount-1); `[custom]` names are appended and never renumbered, so an id
 * keeps its meaning across reloads while requests are in flight.
 */
export class MethodRegistry {
  readonly #ids = new Map<string, number>();
  readonly #names: string[] = [];
  /** idOf's last lookup (forgotten when a name is interned). */
  #lastName: string | undefined = undefined;
  #lastId = UNKNOWN_METHOD_ID;
  /** How many ids belong to standard (`[routing]`-eligible) methods. */
  readonly standardCount: number;

  constructor(standard: readonly string[] = STANDARD_METHODS) {
    for (const name of standard) this.intern(name);
    this.standardCount = this.#names.length;
  }

  /** Number of ids handed out so far. */
  get size(): number {
    return this.#names.length;
  }

  /** The id of `name`, or UNKNOWN_METHOD_ID. Exact, case-sensitive match. */
  idOf(name: string): number {
    // A request's method is a fresh string whose hash the map would compute (~350
    // instructions); the last name looked up, compared by content, skips that for a run of
    // the same method.
    if (name === this.#lastName) return this.#lastId;
    const id = this.#ids.get(name) ?? UNKNOWN_METHOD_ID;
    this.#lastName = name;
    this.#lastId = id;
    return id;
  }

  /** True when `name` is one of the standard methods `[routing]` accepts. */
  isStandard(name: string): boolean {
    const id = this.#ids.get(name);
    return id !== undefined && id < this.standardCount;
  }

  /** The id of `name`, allocating a new one at the end when it is new. */
  intern(name: string): number {
    const known = this.#ids.get(name);
    if (known !== undefined) return known;
    const id = this.#names.length;
    this.#lastName = undefined;
    this.#ids.set(name, id);
    this.#names.push(name);
    return id;
  }

  /** The name behind an id (for logs and tables). */
  nameOf(id: number): string | undefined {
    return this.#names[id];
  }

  /** Every standard method name, in id order. */
  standardNames(): readonly string[] {
    return this.#names.slice(0, this.standardCount);
  }
}

/** Solana names followed by EVM names; the order fixes the standard ids. */
export const STANDARD_METHODS: readonly string[] = [...SOLANA_METHODS, ...EVM_METHODS];
