/** A key's required_filters (issue 29): what names a filter and what does not. */
import { describe, expect, it } from 'vitest';
import { hasRequiredFilter } from './required-filters.js';

describe('hasRequiredFilter', () => {
  it('finds eth_getLogs address and topics, not empty ones', () => {
    const need = ['address', 'topics'];
    expect(hasRequiredFilter([{ address: '0xab' }], need)).toBe(true);
    expect(hasRequiredFilter([{ topics: [null, '0x01'] }], need)).toBe(true);
    expect(hasRequiredFilter([{ topics: [[], ['0x01']] }], need)).toBe(true);
    expect(hasRequiredFilter([{ fromBlock: '0x0' }], need)).toBe(false);
    expect(hasRequiredFilter([{ address: [], topics: [null, null] }], need)).toBe(false);
    expect(hasRequiredFilter([{ address: null, topics: [[]] }], need)).toBe(false);
  });

  it("finds getProgramAccounts' filters in its filters list, and token accounts' mint", () => {
    const program = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
    const need = ['dataSize', 'memcmp'];
    expect(hasRequiredFilter([program, { filters: [{ dataSize: 165 }] }], need)).toBe(true);
    expect(
      hasRequiredFilter([program, { filters: [{ memcmp: { offset: 0, bytes: 'x' } }] }], need),
    ).toBe(true);
    expect(hasRequiredFilter([program, { encoding: 'base64' }], need)).toBe(false);
    expect(hasRequiredFilter([program, { filters: [] }], need)).toBe(false);
    expect(hasRequiredFilter([program], need)).toBe(false);
    expect(hasRequiredFilter(['owner', { mint: 'M' }, { encoding: 'jsonParsed' }], ['mint'])).toBe(
      true,
    );
    expect(hasRequiredFilter(['owner', { programId: program }], ['mint'])).toBe(false);
    expect(hasRequiredFilter(undefined, ['mint'])).toBe(false);
  });
});
