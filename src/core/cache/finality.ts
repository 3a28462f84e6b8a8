/**
 * Where the chain's finalized head comes from: the answers passing through the proxy, never a
 * probe of its own. An EVM `eth_getBlockByNumber("finalized", …)` answer gives the finalized
 * block; with `evm_finality_depth` set, the newest `eth_blockNumber` minus that depth counts
 * too. The head only moves forward: a lagging node's older answer never lowers it. Until an
 * answer has been seen the head is unknown, and nothing that depends on it is cached.
 */

/** Reads `0x…` quantities; undefined for anything else (or beyond 2^53). */
export function quantity(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{1,13}$/.test(value)) return undefined;
  return Number.parseInt(value, 16);
}

/** The finalized heads learned from traffic. */
export class FinalityTracker {
  #evmFinalized: number | undefined = undefined;
  #evmHead: number | undefined = undefined;

  constructor(private depth: number | undefined) {}

  /** Applies a reloaded `evm_finality_depth`. */
  setDepth(depth: number | undefined): void {
    this.depth = depth;
  }

  /** The highest EVM block known to be final, or undefined while unknown. */
  evmFinalizedBlock(): number | undefined {
    const byDepth =
      this.depth === undefined || this.#evmHead === undefined
        ? undefined
        : this.#evmHead - this.depth;
    if (byDepth === undefined) return this.#evmFinalized;
    return this.#evmFinalized === undefined ? byDepth : Math.max(byDepth, this.#evmFinalized);
  }

  /** Hears a successful answer's parsed `result` to `method` asked with canonical `params`. */
  observe(method: string, params: string, result: unknown): void {
    if (method === 'eth_blockNumber') {
      const head = quantity(result);
      if (head !== undefined && (this.#evmHead === undefined || head > this.#evmHead)) {
        this.#evmHead = head;
      }
      return;
    }
    if (method === 'eth_getBlockByNumber' && params.startsWith('["finalized"')) {
      const block = typeof result === 'object' && result !== null ? result : undefined;
      const n = quantity((block as { number?: unknown } | undefined)?.number);
      if (n !== undefined && (this.#evmFinalized === undefined || n > this.#evmFinalized)) {
        this.#evmFinalized = n;
      }
    }
  }

  /** Whether `method`'s answers feed the tracker (so the cache parses them). */
  static observes(method: string): boolean {
    return method === 'eth_blockNumber' || method === 'eth_getBlockByNumber';
  }
}
