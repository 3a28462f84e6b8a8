import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  INVALID,
  isJsonSpace,
  skipBareScalar,
  skipNumber,
  skipPlainString,
  skipSpace,
  skipTrustedString,
} from './json-lexer.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/;

describe('json-lexer', () => {
  it('skips JSON whitespace only, and never past `end`', () => {
    expect([' ', '\t', '\n', '\r'].every((c) => isJsonSpace(c.charCodeAt(0)))).toBe(true);
    expect(isJsonSpace(0x0b) || isJsonSpace(0xa0) || isJsonSpace(undefined)).toBe(false);
    expect(skipSpace(bytes(' \t\r\n x'), 0, 7)).toBe(5);
    expect(skipSpace(bytes('    '), 1, 3)).toBe(3);
  });

  it('agrees with JSON.parse on where a string ends', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ maxLength: 3 }), (value, tail) => {
        const text = JSON.stringify(value);
        const all = bytes(text + tail);
        const length = Buffer.byteLength(text);
        expect(skipTrustedString(all, 0, all.length)).toBe(length);
        const plain = skipPlainString(all, 0, all.length);
        expect(plain).toBe(text.includes('\\') ? INVALID : length);
      }),
    );
  });

  it('stops a trusted or plain string at `end`', () => {
    expect(skipTrustedString(bytes('"abc"'), 0, 4)).toBe(INVALID);
    expect(skipPlainString(bytes('"abc"'), 0, 4)).toBe(INVALID);
    expect(skipTrustedString(bytes('"a\\\\"'), 0, 5)).toBe(5);
  });

  it('reads numbers by the JSON grammar', () => {
    const candidate = fc.stringMatching(/^-?[0-9]{0,3}(\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?[,x]?$/);
    fc.assert(
      fc.property(candidate, (text) => {
        const match = NUMBER.exec(text);
        const end = skipNumber(bytes(text), 0, text.length);
        // A longest grammatical prefix that leaves a dangling `.`, `e` or `-` is no number.
        const dangling = match !== null && /^[.eE]/.test(text.slice(match[0].length));
        if (match === null || dangling) expect(end, text).toBe(INVALID);
        else expect(end, text).toBe(match[0].length);
      }),
    );
  });

  it.each([
    ['true,', 4],
    ['false}', 5],
    ['null', 4],
    ['nul', INVALID],
    ['-1.5e3]', 6],
    ['"s"', INVALID],
    ['{', INVALID],
    ['', INVALID],
  ])('skipBareScalar(%j) → %i', (text, end) => {
    expect(skipBareScalar(bytes(text), 0, text.length)).toBe(end);
  });
});
