/**
 * The transactions mock nodes have accepted. One mempool per node by default; several nodes can
 * share one, which models a provider that has already gossiped a transaction: node A accepts
 * it, node B then answers "already known".
 */

/** Which chain's identifier a transaction is known by. */
export type TransactionChain = 'evm' | 'solana';

/** A transaction a node accepted. */
export interface AcceptedTransaction {
  readonly chain: TransactionChain;
  /** EVM: the 0x keccak-256 hash; Solana: the first signature, base58. */
  readonly id: string;
  /** The node that accepted it. */
  readonly node: string;
}

/** Default bound: plenty for tests and demos, small enough never to matter in memory. */
const DEFAULT_CAPACITY = 10_000;

/** A bounded set of accepted transactions; the oldest is forgotten first. */
export class MockMempool {
  readonly capacity: number;
  readonly #entries = new Map<string, AcceptedTransaction>();

  constructor(options: { capacity?: number } = {}) {
    const { capacity = DEFAULT_CAPACITY } = options;
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`mock mempool: capacity = ${capacity}; expected an integer ≥ 1`);
    }
    this.capacity = capacity;
  }

  /** Remembers the transaction as accepted by `node`; false when it was already known. */
  admit(chain: TransactionChain, id: string, node: string): boolean {
    const key = `${chain}:${id}`;
    if (this.#entries.has(key)) return false;
    if (this.#entries.size >= this.capacity) {
      // Maps iterate in insertion order, so the first key is the oldest.
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, { chain, id, node });
    return true;
  }

  /** Whether the transaction is known. */
  has(chain: TransactionChain, id: string): boolean {
    return this.#entries.has(`${chain}:${id}`);
  }

  /** Known transactions, oldest first; only `node`'s when given. */
  accepted(node?: string): AcceptedTransaction[] {
    const all = [...this.#entries.values()];
    return node === undefined ? all : all.filter((entry) => entry.node === node);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Forgets every transaction. */
  clear(): void {
    this.#entries.clear();
  }
}
