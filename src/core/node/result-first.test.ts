import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonMembers,
  RawJson,
  cycle,
  jsonWhitespace,
  serialiseJson,
} from '../../../test/support/json-rpc-arbitraries.js';
import { isResultFirst } from './result-first.js';

const check = (text: string): boolean => isResultFirst(Buffer.from(text, 'utf8'));

describe('isResultFirst', () => {
  it.each([
    ['{"jsonrpc":"2.0","result":[1,2,3],"id":1}', true],
    ['{"jsonrpc":"2.0","id":1,"result":"aGVsbG8="}', true],
    ['{"result":null}', true],
    [' \n{ "id" : "8f2c-1d3e" , "jsonrpc" : "2.0" , "result" : {} }', true],
    ['{"id":null,"result":1}', true],
    ['{"id":-12.5e3,"result":1}', true],
    ['{"jsonrpc":"2.0","error":{"code":-32005},"id":1}', false],
    ['{"jsonrpc":"2.0","id":1,"error":{"code":-32005},"result":1}', false],
    ['{"id":{"nested":1},"result":1}', false],
    ['{"id":[1],"result":1}', false],
    ['{"id":"a\\"b","result":1}', false],
    ['{"res\\u0075lt":1}', false],
    ['{"context":{},"result":1}', false],
    ['[{"result":1}]', false],
    ['"result"', false],
    ['', false],
    ['{"id":1 "result":1}', false],
    ['{"id":1,"result" 1}', false],
    ['{"id":01,"result":1}', false],
    ['{"id":tru,"result":1}', false],
  ])('%s → %s', (text, expected) => {
    expect(check(text)).toBe(expected);
  });

  it('looks no further than the first 256 bytes', () => {
    const id = `"${'x'.repeat(300)}"`;
    expect(check(`{"id":${id},"result":1}`)).toBe(false);
    expect(check(`{"id":"${'x'.repeat(200)}","result":1}`)).toBe(true);
  });

  it('is true exactly when `result` comes before every member but plain jsonrpc/id ones', () => {
    const member = fc.oneof(
      fc.constant(['jsonrpc', '2.0'] as const),
      fc.tuple(
        fc.constant('id'),
        fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string()),
      ),
      fc.tuple(fc.constant('id'), fc.constantFrom(null, true, { a: 1 }, [1])),
      fc.tuple(fc.constantFrom('result', 'error'), fc.jsonValue({ maxDepth: 1 })),
      fc.tuple(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 })),
      fc.tuple(fc.constant(new RawJson('"res\\u0075lt"')), fc.constant(1)),
    );
    const isPlainScalar = (value: unknown): boolean =>
      value === null ||
      typeof value === 'number' ||
      typeof value === 'boolean' ||
      (typeof value === 'string' && !JSON.stringify(value).includes('\\'));
    fc.assert(
      fc.property(fc.array(member, { maxLength: 5 }), jsonWhitespace, (pairs, spaces) => {
        const ws = cycle(spaces);
        const text = `${ws()}${serialiseJson(new JsonMembers(pairs), ws)}`;
        // Everything the scan needs lies inside the 256 bytes it reads.
        fc.pre(Buffer.byteLength(text) <= 256);
        const at = pairs.findIndex(([key]) => key !== 'jsonrpc' && key !== 'id');
        const expected =
          at !== -1 &&
          pairs[at]![0] === 'result' &&
          pairs.slice(0, at).every(([, value]) => isPlainScalar(value));
        expect(check(text), text).toBe(expected);
      }),
    );
  });
});
