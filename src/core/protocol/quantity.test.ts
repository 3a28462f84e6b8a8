/** Block numbers in every spelling a node reads (issue 29). */
import { describe, expect, it } from 'vitest';
import { HUGE_BLOCK, hexQuantity, safeQuantity } from './quantity.js';

describe('hexQuantity', () => {
  it('reads 0x and 0X, any case, and leading zeros as the number they are', () => {
    expect(hexQuantity('0x10')).toBe(16);
    expect(hexQuantity('0X1000')).toBe(4096);
    expect(hexQuantity('0xFf')).toBe(255);
    expect(hexQuantity('0x0')).toBe(0);
    expect(hexQuantity('0x0000')).toBe(0);
    expect(hexQuantity('0x00000000000fffff')).toBe(0xfffff);
    expect(hexQuantity(`0x${'0'.repeat(60)}2a`)).toBe(42);
    expect(hexQuantity('0x1fffffffffffff')).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('calls a value past Number.MAX_SAFE_INTEGER huge', () => {
    expect(hexQuantity('0x20000000000000')).toBe(HUGE_BLOCK);
    expect(hexQuantity('0xffffffffffffffff')).toBe(HUGE_BLOCK);
    expect(safeQuantity('0xffffffffffffffff')).toBeUndefined();
  });

  it('is no number for text that is not a quantity', () => {
    for (const text of ['0x', '12', 'latest', '0x1g', ' 0x1', '0x 1', '-0x1', 'x10', '']) {
      expect(hexQuantity(text)).toBeUndefined();
    }
    expect(safeQuantity(16)).toBeUndefined();
  });
});
