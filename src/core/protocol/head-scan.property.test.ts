import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  commitmentOf,
  contextSlotOf,
  largeContextSlotOf,
  errorContextSlotOf,
  minContextSlotOf,
  numberAt,
  resultNumberOf,
} from './head-scan.js';
import { scanMethod, scanned } from './method-scan.js';
import { packAsk, solanaAskOf } from './request-ask.js';
import { skipSpace } from './json-lexer.js';

/*
 * The scans walk bytes in JS for speed; what they answer is defined by the plain formulation
 * with native Buffer searches below (the one they replaced). Both must agree on any input,
 * including near-misses: names cut short, a `}` before or after `"slot"`, the envelope at the
 * edge of its window, bodies either side of the JS/native size switch.
 */
const CONTEXT = Buffer.from('"context"');
const SLOT = Buffer.from('"slot"');

function referenceContextSlot(body: Buffer): number {
  const at = body.indexOf(CONTEXT);
  if (at === -1 || at >= Math.min(body.length, 256)) return -1;
  const close = body.indexOf(0x7d, at);
  if (close === -1) return -1;
  const slot = body.indexOf(SLOT, at + CONTEXT.length);
  if (slot === -1 || slot >= close) return -1;
  let i = skipSpace(body, slot + SLOT.length, close);
  if (body[i] !== 0x3a) return -1;
  i = skipSpace(body, i + 1, close);
  return numberAt(body, i, close);
}

/** `"name":N` after the first `"name"` anywhere, as the native search reads it. */
function referenceMember(body: Buffer, name: string): number {
  const key = Buffer.from(`"${name}"`);
  const at = body.indexOf(key);
  if (at === -1) return -1;
  let i = skipSpace(body, at + key.length, body.length);
  if (body[i] !== 0x3a) return -1;
  i = skipSpace(body, i + 1, body.length);
  return numberAt(body, i, body.length);
}

function referenceCommitment(body: Buffer): 0 | 1 | 2 {
  if (body.includes('"confirmed"')) return 1;
  return body.includes('"processed"') ? 0 : 2;
}

/** Numbers as numberAt reads them, and near-misses: fractions, exponents, odd hex strings. */
const NUMBER_TEXTS = [
  '1.5',
  '7e3',
  '7E3',
  '-1',
  '00',
  '1234567890123456',
  '999999999999999',
  '"0x1f"',
  '"0X1F"',
  '"0x"',
  '"0x1g"',
  '"0x1f',
  '"0x0000000000000000001f"',
  '"0x1fffffffffffff"',
  '"0x20000000000000"',
  '"0xffffffffffffff"',
];

/** Text made of the pieces the scans look for, cut and shuffled, plus filler of any length. */
const piece = fc.oneof(
  fc.constantFrom(
    '"context"',
    '"context',
    '"slot"',
    '"slot":',
    '"slo',
    ':',
    ' ',
    '}',
    '{',
    '"',
    ',',
    '12',
    '"0x1f"',
    '"confirmed"',
    '"processed"',
    '"confirme',
    '"process',
    '"value":1',
    '"minContextSlot"',
    '"minContextSlot":5',
    '"result"',
    '"result":"0x10"',
    '"contextSlot":9',
    '\t',
    '\n',
    '\r',
  ),
  fc.constantFrom(...NUMBER_TEXTS),
  fc.string({ maxLength: 6 }),
  fc.nat({ max: 400 }).map((n) => 'x'.repeat(n)),
);
const body = fc.array(piece, { maxLength: 24 }).map((parts) => Buffer.from(parts.join('')));

/**
 * A real envelope with filler placed so `"context"` lands anywhere near the window's edge,
 * sometimes cut short (a truncated answer: no `}` after the slot).
 */
const envelope = fc
  .record({
    pad: fc.nat({ max: 300 }),
    slot: fc.oneof(
      fc.nat().map(String),
      fc.constantFrom(...NUMBER_TEXTS, ' 5', '5 ', '\t5\n', ': 5', ''),
    ),
    tail: fc.nat({ max: 600 }),
    cut: fc.option(fc.nat({ max: 400 })),
  })
  .map(({ pad, slot, tail, cut }) => {
    // `slot` is any number text numberAt reads, or a near-miss (a fraction, an exponent, a
    // hex string too long or unclosed, whitespace around it).
    const text = `{"jsonrpc":"2.0","x":"${'a'.repeat(pad)}","result":{"context":{"apiVersion":"2.0","slot":${slot}},"value":"${'b'.repeat(tail)}"},"id":1}`;
    return Buffer.from(cut === null ? text : text.slice(0, cut));
  });

describe('head scans agree with the plain native search', () => {
  it('context.slot, on any arrangement of its tokens and real envelopes', () => {
    fc.assert(
      fc.property(fc.oneof(body, envelope), (bytes) => {
        const expected = referenceContextSlot(bytes);
        expect(contextSlotOf(bytes)).toBe(expected);
        // The JS walk larger answers take (beyond the WebAssembly scan's memory) reads alike.
        expect(largeContextSlotOf(bytes)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('a member read after its name (minContextSlot, result, contextSlot), small or large', () => {
    fc.assert(
      fc.property(body, (bytes) => {
        expect(minContextSlotOf(bytes)).toBe(referenceMember(bytes, 'minContextSlot'));
        expect(resultNumberOf(bytes)).toBe(referenceMember(bytes, 'result'));
        expect(errorContextSlotOf(bytes)).toBe(referenceMember(bytes, 'contextSlot'));
      }),
      { numRuns: 3000 },
    );
  });

  it("a request's commitment and minContextSlot (request-ask.ts), small or large", () => {
    fc.assert(
      fc.property(body, (bytes) => {
        const expected = packAsk(
          referenceCommitment(bytes),
          referenceMember(bytes, 'minContextSlot'),
        );
        expect(solanaAskOf(bytes)).toBe(expected);
        expect(commitmentOf(bytes)).toBe(referenceCommitment(bytes));
      }),
      { numRuns: 3000 },
    );
  });

  it("the method scan's walk reads the same ask, whatever the name and what follows it", () => {
    const name = fc.oneof(
      fc.constantFrom('getBalance', 'confirmed', 'processed', 'minContextSlot', 'x', ''),
      fc.string({ maxLength: 8 }).filter((text) => /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/.test(text)),
    );
    const rest = fc.array(
      fc.oneof(
        piece,
        fc.constantFrom(
          '"method"',
          '\\u',
          '\\\\u',
          // Right after the name's closing quote, these spell a token that starts at that quote.
          'minContextSlot":3',
          'confirmed"',
          'processed"',
        ),
      ),
      {
        maxLength: 12,
      },
    );
    fc.assert(
      fc.property(name, rest, (method, parts) => {
        const bytes = Buffer.from(`{"method":"${method}"${parts.join('')}`);
        const found = scanMethod(bytes);
        if (found === undefined || scanned.headAsk === undefined) return;
        expect(found).toBe(method);
        const expected = packAsk(
          referenceCommitment(bytes),
          referenceMember(bytes, 'minContextSlot'),
        );
        expect(scanned.headAsk).toBe(expected);
      }),
      { numRuns: 5000 },
    );
  });
});
