import { describe, expect, it } from 'vitest';
import { cut, elements, memberText, utf8, whole } from '../../../test/support/json-spans-text.js';
import {
  type Span,
  arrayElementSpans,
  memberValueSpan,
  spliceSpan,
  trimmedSpan,
} from './json-spans.js';

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
