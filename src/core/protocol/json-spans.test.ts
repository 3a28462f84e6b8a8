import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonMembers,
  RawJson,
  cycle,
  jsonWhitespace,
  serialiseJson,
} from '../../../test/support/json-rpc-arbitraries.js';
import {
  type Span,
  arrayElementSpans,
  memberValueSpan,
  spliceSpan,
  trimmedSpan,
} from './json-spans.js';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const cut = (bytes: Uint8Array, span: Span) =>
  Buffer.from(bytes).toString('utf8', span.start, span.end);

/** The element texts of an array text, or undefined. */
function elements(text: string): string[] | undefined {
  const bytes = utf8(text);
  return arrayElementSpans(bytes)?.map((span) => cut(bytes, span));
}

/** The text of member `key` in the object text, or null/undefined as memberValueSpan answers. */
function memberText(text: string, key = 'id'): string | null | undefined {
  const bytes = utf8(text);
  const span = memberValueSpan(bytes, { start: 0, end: bytes.length }, key);
  return span ? cut(bytes, span) : span;
}

const whole = (bytes: Uint8Array): Span => ({ start: 0, end: bytes.length });

describe('arrayElementSpans', () => {
  it.each<[string, string, string[]]>([
    ['an empty array', '[]', []],
    ['an empty array with whitespace', ' \n[ \t\r\n ] \n', []],
    ['one number', '[1]', ['1']],
    ['scalars', '[1,true,false,null,"a"]', ['1', 'true', 'false', 'null', '"a"']],
    ['whitespace everywhere', ' \t[ \n1 \r, \t"b"\n,\r\nnull ]\n ', ['1', '"b"', 'null']],
    ['nested arrays', '[[1,[2,[3]]],[],[[]]]', ['[1,[2,[3]]]', '[]', '[[]]']],
    [
      'objects with nested members',
      '[{"a":{"b":[1,{"c":2}]}},{},{"x":[]}]',
      ['{"a":{"b":[1,{"c":2}]}}', '{}', '{"x":[]}'],
    ],
    [
      'strings holding separators and brackets',
      '["a,b","]","}","[","{",":"]',
      ['"a,b"', '"]"', '"}"', '"["', '"{"', '":"'],
    ],
    [
      'escaped quotes and backslashes',
      String.raw`["\"", "\\", "\\\"", "a\\\\", "\\\\\"]", {"k\"]":"v\\"}]`,
      [
        String.raw`"\""`,
        String.raw`"\\"`,
        String.raw`"\\\""`,
        String.raw`"a\\\\"`,
        String.raw`"\\\\\"]"`,
        String.raw`{"k\"]":"v\\"}`,
      ],
    ],
    [
      'UTF-8 text',
      '["héllo","日本","😀",{"ключ":"ü]"}]',
      ['"héllo"', '"日本"', '"😀"', '{"ключ":"ü]"}'],
    ],
    [
      'numbers spelt as written',
      '[9007199254740993, 1.0, -0, 1e400, 18446744073709551615, -1.5E-7]',
      ['9007199254740993', '1.0', '-0', '1e400', '18446744073709551615', '-1.5E-7'],
    ],
    [
      'pretty-printed objects',
      '[\n  {\n    "id": 1,\n    "method": "x"\n  },\n  2\n]',
      ['{\n    "id": 1,\n    "method": "x"\n  }', '2'],
    ],
  ])('cuts %s', (_case, text, expected) => {
    expect(elements(text)).toEqual(expected);
  });

  it.each<[string, string]>([
    ['an object', '{"a":[1,2]}'],
    ['a string', '"[1,2]"'],
    ['a number', '12'],
    ['null', 'null'],
    ['an empty text', ''],
    ['only whitespace', ' \n'],
  ])('answers undefined for a top-level %s', (_case, text) => {
    expect(elements(text)).toBeUndefined();
  });

  it.each<[string, string]>([
    ['an unterminated array', '[1,2'],
    ['an unterminated string', '["abc'],
    ['an unterminated nested array', '[[1,2]'],
    ['a trailing comma', '[1,]'],
    ['a leading comma', '[,1]'],
    ['a missing comma', '[{} {}]'],
    ['text after the array', '[1] 2'],
  ])('answers undefined on %s (invalid JSON)', (_case, text) => {
    expect(elements(text)).toBeUndefined();
  });

  it('cuts elements nested 50 000 deep without recursion', () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const deepObject = '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000);
    expect(elements(`[${deep},${deepObject}, 3]`)).toEqual([deep, deepObject, '3']);
  });

  it('gives offsets into the buffer, whitespace excluded', () => {
    expect(arrayElementSpans(utf8(' [ 1 , "é" ] '))).toEqual([
      { start: 3, end: 4 },
      { start: 7, end: 11 },
    ]);
  });
});

describe('trimmedSpan', () => {
  it.each<[string, Span]>([
    [' \t\r\n{"id":1}\n', { start: 4, end: 12 }],
    ['{"id":1}', { start: 0, end: 8 }],
    ['   ', { start: 3, end: 3 }],
    ['\u00a0{}', { start: 0, end: 4 }],
  ])('trims only JSON whitespace around %j', (text, expected) => {
    expect(trimmedSpan(utf8(text))).toEqual(expected);
  });
});

describe('memberValueSpan', () => {
  it.each<[string, string, string]>([
    ['a big integer id', '{"id":9007199254740993,"method":"x"}', '9007199254740993'],
    ['the id last', '{"jsonrpc":"2.0","method":"x","id":7}', '7'],
    ['whitespace everywhere', ' {\n "id" \t:\r\n -0.0e+1 \n, "x":1 } ', '-0.0e+1'],
    ['one id with nested ids around it', '{"p":{"id":3},"id":[2],"q":[{"id":4}]}', '[2]'],
    [
      'a string id with escapes',
      String.raw`{"id":"a\"b\\c\u00e9}","m":1}`,
      String.raw`"a\"b\\c\u00e9}"`,
    ],
    ['a UTF-8 string id', '{"id":"日本😀"}', '"日本😀"'],
    ['a null id', '{"id":null}', 'null'],
    ['an object id', '{"id":{"id":1,"a":[{}]} ,"b":2}', '{"id":1,"a":[{}]}'],
    ['an array id', '{"id":[1,"]",[2]]}', '[1,"]",[2]]'],
    ['a boolean id', '{"id":false}', 'false'],
    ['an escaped quote in a value before it', String.raw`{"a":"\",\"id\":3","id":2}`, '2'],
  ])('spans %s', (_case, text, expected) => {
    expect(memberText(text)).toBe(expected);
  });

  it.each<[string, string]>([
    ['an empty object', '{}'],
    ['no id member', '{"method":"x","params":[{"id":1}]}'],
    ['only a nested id', '{"a":{"id":1}}'],
    ['an id inside a string', '{"a":"\\"id\\":1"}'],
    ['a longer name', '{"idx":1}'],
    ['a shorter name', '{"i":1}'],
    ['a differently cased name', '{"ID":1}'],
  ])('answers null for %s', (_case, text) => {
    expect(memberText(text)).toBeNull();
  });

  it.each<[string, string]>([
    ['an escaped name that spells id', String.raw`{"\u0069d":1}`],
    ['an escaped name after the id', String.raw`{"id":1,"\u0069d":2}`],
    ['any escaped name', String.raw`{"a\nb":1,"id":2}`],
    ['an array', '[{"id":1}]'],
    ['a string', '"{\\"id\\":1}"'],
    ['a number', '1'],
    ['an empty span', ''],
    ['an unterminated object', '{"id":1'],
    ['an unterminated value', '{"id":[1'],
    ['a missing colon', '{"id" 1}'],
    ['a missing value', '{"id":}'],
    ['a trailing comma', '{"id":1,}'],
    ['text after the object', '{"id":1} 2'],
  ])('answers undefined for %s', (_case, text) => {
    expect(memberText(text)).toBeUndefined();
  });

  it('reads within a span of a larger buffer', () => {
    const bytes = utf8('[{"id":1}, {"a":{"id":5},"id" : "x"} ,{"b":2}]');
    const spans = arrayElementSpans(bytes) ?? [];
    const ids = spans.map((span) => {
      const value = memberValueSpan(bytes, span, 'id');
      return value ? cut(bytes, value) : value;
    });
    expect(ids).toEqual(['1', '"x"', null]);
  });

  it('does not read past its span', () => {
    const bytes = utf8('{"id":1}{"id":2}');
    expect(memberValueSpan(bytes, { start: 0, end: 7 }, 'id')).toBeUndefined();
    expect(memberValueSpan(bytes, { start: 8, end: 16 }, 'id')).toEqual({ start: 14, end: 15 });
    expect(memberValueSpan(bytes, { start: 8, end: 1_000 }, 'id')).toEqual({ start: 14, end: 15 });
  });

  it('finds other keys', () => {
    expect(memberText('{"id":1,"method":"getSlot"}', 'method')).toBe('"getSlot"');
    expect(memberText('{"result":{"value":18446744073709551615}}', 'result')).toBe(
      '{"value":18446744073709551615}',
    );
  });

  it('skips a deeply nested member value', () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    expect(memberText(`{"params":${deep},"id":3}`)).toBe('3');
  });
});

describe('spliceSpan', () => {
  const text = '{"jsonrpc":"2.0","id":"abc","method":"x"}';
  const bytes = utf8(text);
  const id = memberValueSpan(bytes, whole(bytes), 'id');

  it.each<[string, string]>([
    ['7', '{"jsonrpc":"2.0","id":7,"method":"x"}'],
    ['"x"', '{"jsonrpc":"2.0","id":"x","method":"x"}'],
    ['"é😀"', '{"jsonrpc":"2.0","id":"é😀","method":"x"}'],
    ['', '{"jsonrpc":"2.0","id":,"method":"x"}'],
  ])('replaces the id by %j', (replacement, expected) => {
    expect(id).toBeTruthy();
    expect(spliceSpan(bytes, whole(bytes), id!, replacement).toString('utf8')).toBe(expected);
  });

  it('cuts the outer span out of a larger buffer', () => {
    const batch = utf8('[ {"id":1} , {"id":"é","b":2} ]');
    const [, second] = arrayElementSpans(batch) ?? [];
    const inner = memberValueSpan(batch, second!, 'id');
    expect(spliceSpan(batch, second!, inner!, '42').toString('utf8')).toBe('{"id":42,"b":2}');
  });

  it('splices at the edges of the span', () => {
    const b = utf8('abcdef');
    expect(spliceSpan(b, { start: 1, end: 5 }, { start: 1, end: 1 }, 'X').toString()).toBe('Xbcde');
    expect(spliceSpan(b, { start: 1, end: 5 }, { start: 5, end: 5 }, 'X').toString()).toBe('bcdeX');
    expect(spliceSpan(b, { start: 1, end: 5 }, { start: 1, end: 5 }, 'X').toString()).toBe('X');
  });

  it.each<[string, Span, Span]>([
    ['inner starting before the span', { start: 2, end: 5 }, { start: 1, end: 3 }],
    ['inner ending after the span', { start: 0, end: 4 }, { start: 1, end: 5 }],
    ['inner reversed', { start: 0, end: 6 }, { start: 4, end: 3 }],
    ['the span past the buffer', { start: 0, end: 7 }, { start: 1, end: 2 }],
    ['a negative span', { start: -1, end: 6 }, { start: 1, end: 2 }],
  ])('throws a RangeError for %s', (_case, span, inner) => {
    expect(() => spliceSpan(utf8('abcdef'), span, inner, 'X')).toThrow(RangeError);
  });
});

describe('the point: ids swapped without touching other bytes', () => {
  it('keeps integers beyond 2^53 byte for byte', () => {
    const batch = utf8(
      '[{"jsonrpc":"2.0","id":9007199254740993,"method":"getBalance","params":[18446744073709551615]}]',
    );
    const [element, ...rest] = arrayElementSpans(batch) ?? [];
    expect(rest).toEqual([]);
    const id = memberValueSpan(batch, element!, 'id');
    expect(cut(batch, id!)).toBe('9007199254740993');
    const upstream = spliceSpan(batch, element!, id!, '0');
    const expected =
      '{"jsonrpc":"2.0","id":0,"method":"getBalance","params":[18446744073709551615]}';
    expect(upstream.equals(utf8(expected))).toBe(true);
    // The round trip this module replaces loses the precision.
    const reserialised = JSON.stringify({
      ...(JSON.parse(cut(batch, element!)) as Record<string, unknown>),
      id: 0,
    });
    expect(reserialised).not.toBe(expected);
    expect(reserialised).toContain('18446744073709552000');
  });
});

/** Layouts of JSON.stringify: compact, two spaces, tabs. */
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

function isJsonSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}
