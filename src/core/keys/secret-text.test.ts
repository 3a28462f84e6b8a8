import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SecretText } from './secret-text.js';

/** The oracle: the texts SHA-256 would hash the same (their UTF-8 bytes). */
function sameUtf8(a: string, b: string): boolean {
  return Buffer.from(a, 'utf8').equals(Buffer.from(b, 'utf8'));
}

const KEY = 'ck_hotpath_bench_key_0123456789abcdefghijklmnopq';

describe('SecretText', () => {
  it('matches its own text and nothing that differs in one character or in length', () => {
    const secret = new SecretText(KEY);
    expect(secret.matches(KEY)).toBe(true);
    expect(secret.matches(`/${KEY}`.slice(1))).toBe(true);
    for (let i = 0; i < KEY.length; i++) {
      const changed = `${KEY.slice(0, i)}${KEY[i] === 'x' ? 'y' : 'x'}${KEY.slice(i + 1)}`;
      expect(secret.matches(changed)).toBe(false);
    }
    expect(secret.matches(KEY.slice(0, -1))).toBe(false);
    expect(secret.matches(`${KEY}a`)).toBe(false);
    expect(secret.matches('')).toBe(false);
    expect(new SecretText('').matches('')).toBe(true);
  });

  it('never counts what a longer text left in the scratch bytes', () => {
    // Five bytes: the second word's padding holds what the 48-byte text wrote there.
    const short = new SecretText('abcde');
    expect(short.matches(KEY)).toBe(false);
    expect(short.matches('abcde')).toBe(true);
    for (let length = 0; length < 12; length++) {
      const text = KEY.slice(0, length);
      const secret = new SecretText(text);
      expect(secret.matches(KEY)).toBe(length === KEY.length);
      expect(secret.matches(text)).toBe(true);
    }
  });

  it('compares texts past the scratch array whole', () => {
    const long = 'k'.repeat(2000);
    const secret = new SecretText(long);
    expect(secret.matches(long)).toBe(true);
    expect(secret.matches(`${'k'.repeat(1999)}j`)).toBe(false);
    expect(secret.matches('k'.repeat(1999))).toBe(false);
    // A short text after a long one, and a long text against a short secret.
    expect(new SecretText('kk').matches(long)).toBe(false);
    expect(new SecretText('kk').matches('kk')).toBe(true);
  });

  it('agrees with UTF-8 equality on any texts, non-ASCII and lone surrogates included', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ unit: 'grapheme', maxLength: 40 }),
      fc.string({ unit: fc.constantFrom('a', 'b', '\u00e9', '\ud800', '\udc00'), maxLength: 6 }),
      fc.string({ unit: 'binary-ascii', minLength: 300, maxLength: 400 }),
    );
    fc.assert(
      fc.property(text, text, (a, b) => {
        const secret = new SecretText(a);
        expect(secret.matches(b)).toBe(sameUtf8(a, b));
        expect(secret.matches(a)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
