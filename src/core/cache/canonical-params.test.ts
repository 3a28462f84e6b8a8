import { describe, expect, it } from 'vitest';
import { canonicalParams } from './canonical-params.js';

function canon(text: string): string | undefined {
  const bytes = Buffer.from(text);
  return canonicalParams(bytes, { start: 0, end: bytes.length });
}

describe('canonicalParams', () => {
  it('ignores whitespace, member order, the id and other members', () => {
    const a = canon('{"jsonrpc":"2.0","id":1,"method":"m","params":[{"b":1,"a":"x"}]}');
    const b = canon(' { "params" : [ { "a" : "x" , "b" : 1 } ] , "method":"m", "id": "other" } ');
    expect(a).toBe('[{"a":"x","b":1}]');
    expect(b).toBe(a);
  });

  it('normalises string escapes', () => {
    expect(canon('{"params":["\\u0061b"]}')).toBe(canon('{"params":["ab"]}'));
  });

  it('keeps numbers exactly as written, so integers beyond 2^53 stay distinct', () => {
    const a = canon('{"params":[12345678901234567891]}');
    const b = canon('{"params":[12345678901234567892]}');
    expect(a).toBe('[12345678901234567891]');
    expect(a).not.toBe(b);
    expect(canon('{"params":[1.0]}')).not.toBe(canon('{"params":[1]}'));
  });

  it("is '' without params", () => {
    expect(canon('{"method":"getSlot","id":1}')).toBe('');
  });

  it.each([
    ['a broken tail', '{"method":"getSlot","params":[], garbage'],
    ['a repeated member', '{"params":[1],"params":[2]}'],
    ['a repeated nested member', '{"params":[{"a":1,"a":2}]}'],
    ['a bad number', '{"params":[01]}'],
    ['a bad literal', '{"params":[nul]}'],
    ['trailing bytes', '{"params":[]} x'],
    ['not an object', '[{"params":[]}]'],
    ['nesting too deep', `{"params":${'['.repeat(40)}${']'.repeat(40)}}`],
    ['a raw control character', '{"params":["a\nb"]}'],
  ])('refuses %s (the request bypasses the cache)', (_name, text) => {
    expect(canon(text)).toBeUndefined();
  });
});
