import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  NAMES,
  bytesOf,
  expectAgreesWithParse,
  expectedShape,
} from '../../../test/support/json-shape-oracle.js';
import { jsonShape } from './json-shape.js';

const RUNS = 5000;

/** Bytes that move JSON.parse's verdict around when dropped into a JSON text. */
const JSONISH = ascii('{}[]",:0123456789eE.+-tfnrul\\ \t\n');
function ascii(text: string): number[] {
  return Array.from(text, (c) => c.charCodeAt(0));
}

const jsonishByte = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...JSONISH) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }) },
);

/** Objects whose top-level names include `error` and escape-worthy ones more often than chance. */
const rpcLikeObject = fc.dictionary(
  fc.oneof(
    fc.constantFrom('error', 'result', 'id', 'jsonrpc', 'errors', 'Error', 'err"or', 'e\nrror'),
    fc.string(),
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

type Mutation = { op: 'delete' | 'insert' | 'replace'; at: number; byte: number };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('delete', 'insert', 'replace'),
  at: fc.nat(),
  byte: jsonishByte,
});

function mutate(text: string, mutations: readonly Mutation[]): Uint8Array {
  const bytes = [...Buffer.from(text, 'utf8')];
  for (const { op, at, byte } of mutations) {
    const position = at % (bytes.length + 1);
    if (op === 'insert') bytes.splice(position, 0, byte);
    else if (position < bytes.length)
      bytes.splice(position, 1, ...(op === 'replace' ? [byte] : []));
  }
  return Uint8Array.from(bytes);
}

// 45,000 generated cases of pure CPU work: a few seconds alone, several times that while other
// processes share the cores. The timeout only catches a hang, so it is generous.
describe('jsonShape properties', { timeout: 120_000 }, () => {
  it('gives the exact verdict for any serialized JSON value, however indented', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue(), rpcLikeObject),
        fc.constantFrom(0, 1, 2, '\t', ' \r\n'),
        (value, indent) => {
          const text = JSON.stringify(value, null, indent);
          const shape = jsonShape(bytesOf(text));
          const expected = expectedShape(value);
          if (shape !== expected) expect(NAMES[shape], text).toBe(NAMES[expected]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('agrees with JSON.parse on mutated JSON texts', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.jsonValue({ maxDepth: 4 }), rpcLikeObject),
        fc.array(mutation, { minLength: 1, maxLength: 3 }),
        (value, mutations) => expectAgreesWithParse(mutate(JSON.stringify(value), mutations)),
      ),
      { numRuns: RUNS * 4 },
    );
  });

  it('agrees with JSON.parse on short runs of JSON-ish bytes', () => {
    fc.assert(
      fc.property(fc.array(jsonishByte, { maxLength: 12 }), (bytes) =>
        expectAgreesWithParse(Uint8Array.from(bytes)),
      ),
      { numRuns: RUNS * 4 },
    );
  });

  it('agrees with JSON.parse on arbitrary bytes and strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 16 }),
          fc.string({ unit: 'binary', maxLength: 16 }).map((s) => bytesOf(s)),
        ),
        (bytes) => expectAgreesWithParse(bytes),
      ),
      { numRuns: RUNS },
    );
  });

  it('agrees with JSON.parse on strings of arbitrary bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 12 }),
        fc.constantFrom('', '{"a":', '['),
        (inner, prefix) => {
          const closing = prefix === '' ? '' : prefix === '[' ? ']' : '}';
          const bytes = Buffer.concat([
            Buffer.from(`${prefix}"`),
            inner,
            Buffer.from(`"${closing}`),
          ]);
          expectAgreesWithParse(bytes);
        },
      ),
      { numRuns: RUNS },
    );
  });

  // The scan trusts that malformed UTF-8 never hides a quote or backslash from the parser.
  it('Buffer#toString keeps every ASCII byte and never makes one from non-ASCII bytes', () => {
    const highBiased = fc.oneof(
      fc.integer({ min: 0x80, max: 0xff }),
      fc.constantFrom(0x22, 0x5c, 0x20, 0x7b),
      fc.integer({ min: 0, max: 0xff }),
    );
    fc.assert(
      fc.property(fc.array(highBiased, { maxLength: 24 }), (bytes) => {
        const decoded = Buffer.from(bytes).toString('utf8');
        const asciiDecoded = Array.from(decoded, (c) => c.codePointAt(0)!).filter((c) => c < 0x80);
        expect(asciiDecoded).toEqual(bytes.filter((b) => b < 0x80));
      }),
      { numRuns: RUNS },
    );
  });
});
