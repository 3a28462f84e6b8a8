import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonMembers,
  RawJson,
  cycle,
  jsonWhitespace,
  serialiseJson,
} from '../../../test/support/json-rpc-arbitraries.js';
import { cut, memberText, utf8, whole } from '../../../test/support/json-spans-text.js';
import { isJsonSpace } from './json-lexer.js';
import { arrayElementSpans, memberValueSpan, spliceSpan } from './json-spans.js';

const indent = fc.constantFrom<0 | 2 | '\t'>(0, 2, '\t');

/** Member names, from plain to ones JSON.stringify escapes (quotes, backslashes, controls). */
const memberName = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('method', 'jsonrpc', 'params', 'i', 'idx', 'Id', 'ID', ' id'),
);
const otherName = memberName.filter((name) => name !== 'id');

/** Member names spelt with escapes: two spell `id`, one does not. */
const ESCAPED_NAMES = [
  new RawJson(String.raw`"\u0069d"`),
  new RawJson(String.raw`"i\u0064"`),
  new RawJson(String.raw`"\"x"`),
];

/** An object text with one or two `id` members among others, in random order and whitespace. */
const objectWithId = fc
  .record({
    ids: fc.array(fc.jsonValue({ maxDepth: 3 }), { minLength: 1, maxLength: 2 }),
    others: fc.array(fc.tuple(otherName, fc.jsonValue({ maxDepth: 3 })), { maxLength: 5 }),
    escaped: fc.option(fc.constantFrom(...ESCAPED_NAMES), { freq: 5 }),
    positions: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
    spaces: jsonWhitespace,
  })
  .map(({ ids, others, escaped, positions, spaces }) => {
    const pairs: Array<readonly [string | RawJson, unknown]> = [...others];
    const insert = (k: number, name: string | RawJson, value: unknown) =>
      pairs.splice((positions[k] ?? 0) % (pairs.length + 1), 0, [name, value]);
    ids.forEach((value, k) => insert(k, 'id', value));
    if (escaped !== null) insert(2, escaped, 'escaped');
    const ws = cycle(spaces);
    const text = `${ws()}${serialiseJson(new JsonMembers(pairs), ws)}${ws()}`;
    // Names written with an escape make the scan unsure, by contract.
    const escapedName = pairs.some(
      ([name]) => name instanceof RawJson || JSON.stringify(name).includes('\\'),
    );
    // So does a repeated id (splicing one would leave the other in the bytes).
    return { text, unsure: escapedName || ids.length > 1 };
  });

describe('json-spans (property)', () => {
  it('cuts arrays into texts that parse to their elements', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 8 }), indent, (v, space) => {
        const text = JSON.stringify(v, null, space);
        const bytes = utf8(text);
        const spans = arrayElementSpans(bytes);
        const parsed = JSON.parse(text) as unknown[];
        expect(spans).toHaveLength(parsed.length);
        expect(spans!.map((span) => JSON.parse(cut(bytes, span)) as unknown)).toEqual(parsed);
        for (const span of spans!) expect(isJsonSpace(bytes[span.start])).toBe(false);
      }),
      { numRuns: 1500 },
    );
  });

  it('cuts arrays with whitespace between every token', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 6 }),
        jsonWhitespace,
        (v, spaces) => {
          const ws = cycle(spaces);
          const text = `${ws()}${serialiseJson(v, ws)}${ws()}`;
          const bytes = utf8(text);
          const spans = arrayElementSpans(bytes);
          expect(spans?.map((span) => JSON.parse(cut(bytes, span)) as unknown)).toEqual(
            JSON.parse(text),
          );
          for (const span of spans!) {
            expect(isJsonSpace(bytes[span.start])).toBe(false);
            expect(isJsonSpace(bytes[span.end - 1])).toBe(false);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('answers undefined for any top-level value that is not an array', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }).filter((v) => !Array.isArray(v)),
        indent,
        (v, space) => {
          expect(arrayElementSpans(utf8(JSON.stringify(v, null, space)))).toBeUndefined();
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('spans the value JSON.parse keeps for id, and splices it', () => {
    fc.assert(
      fc.property(objectWithId, fc.jsonValue({ maxDepth: 2 }), ({ text, unsure }, next) => {
        const bytes = utf8(text);
        const span = memberValueSpan(bytes, whole(bytes), 'id');
        if (unsure) {
          expect(span).toBeUndefined();
          return;
        }
        const parsed = JSON.parse(text) as Record<string, unknown>;
        expect(span).toBeTruthy();
        expect(JSON.parse(cut(bytes, span!))).toEqual(parsed.id);
        const replacement = JSON.stringify(next);
        const spliced = spliceSpan(bytes, whole(bytes), span!, replacement).toString('utf8');
        parsed.id = JSON.parse(replacement);
        expect(JSON.parse(spliced)).toEqual(parsed);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds id in the elements of a batch', () => {
    fc.assert(
      fc.property(fc.array(objectWithId, { minLength: 1, maxLength: 4 }), (objects) => {
        const text = `[${objects.map((o) => o.text).join(',')}]`;
        const bytes = utf8(text);
        const spans = arrayElementSpans(bytes)!;
        expect(spans).toHaveLength(objects.length);
        const parsed = JSON.parse(text) as Array<Record<string, unknown>>;
        spans.forEach((element, k) => {
          const span = memberValueSpan(bytes, element, 'id');
          if (objects[k]!.unsure) expect(span).toBeUndefined();
          else expect(JSON.parse(cut(bytes, span!))).toEqual(parsed[k]!.id);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('answers null for objects without a top-level id', () => {
    fc.assert(
      fc.property(
        fc.dictionary(otherName, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
        indent,
        (object, space) => {
          const text = JSON.stringify(object, null, space);
          const escapedName = Object.keys(object).some((name) =>
            JSON.stringify(name).includes('\\'),
          );
          expect(memberText(text)).toBe(escapedName ? undefined : null);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('terminates without throwing on arbitrary or truncated input', () => {
    const candidates = fc.oneof(
      fc.uint8Array({ maxLength: 200 }),
      fc
        .tuple(fc.array(fc.jsonValue({ maxDepth: 3 })), fc.nat())
        .map(([v, n]) => utf8(JSON.stringify(v)).subarray(0, n)),
      objectWithId.chain(({ text }) => fc.nat(text.length).map((n) => utf8(text).subarray(0, n))),
      fc
        .array(fc.constantFrom(...'[]{}",:\\ 1a'.split('')), { maxLength: 40 })
        .map((chars) => utf8(chars.join(''))),
    );
    fc.assert(
      fc.property(candidates, fc.nat(), fc.nat(), (bytes, a, b) => {
        const spans = arrayElementSpans(bytes);
        for (const span of spans ?? []) {
          expect(0 <= span.start && span.start < span.end && span.end <= bytes.length).toBe(true);
        }
        const outer = { start: Math.min(a, b) % (bytes.length + 1), end: Math.max(a, b) };
        const value = memberValueSpan(bytes, outer, 'id');
        if (value) {
          expect(outer.start <= value.start && value.start < value.end).toBe(true);
          expect(value.end <= Math.min(outer.end, bytes.length)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
