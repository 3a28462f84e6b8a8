/** The finality of an eth_getLogs answer (issue 29: a split's chunks below the finalized block). */
import { describe, expect, it } from 'vitest';
import { isFinal } from './cacheable.js';

describe("isFinal('evm_logs_range')", () => {
  const final = (filter: unknown, head: number | undefined) =>
    isFinal('evm_logs_range', [filter], [], head);

  it('holds for numbered blocks all at or below the finalized block', () => {
    expect(final({ fromBlock: '0x10', toBlock: '0x20' }, 0x20)).toBe(true);
    expect(final({ fromBlock: '0x10', toBlock: '0x21' }, 0x20)).toBe(false);
    expect(final({ fromBlock: '0x10', toBlock: '0x20' }, undefined)).toBe(false);
  });

  it('never holds for tags, a block hash or a reversed range', () => {
    expect(final({ fromBlock: '0x10', toBlock: 'latest' }, 0x100)).toBe(false);
    expect(final({ fromBlock: 'earliest', toBlock: '0x20' }, 0x100)).toBe(false);
    expect(final({ blockHash: '0xab' }, 0x100)).toBe(false);
    expect(final({ fromBlock: '0x30', toBlock: '0x20' }, 0x100)).toBe(false);
  });
});
