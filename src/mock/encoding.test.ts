import { randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { base58Encode } from './encoding.js';

describe('base58Encode', () => {
  it('spells bytes exactly as @scure/base does (leading zeros included)', () => {
    const samples = [
      new Uint8Array(0),
      new Uint8Array(32),
      Uint8Array.from([0, 0, 1, 2, 255]),
      ...Array.from({ length: 200 }, (_, i) => randomBytes(1 + (i % 80))),
    ];
    for (const bytes of samples) expect(base58Encode(bytes)).toBe(base58.encode(bytes));
  });
});
