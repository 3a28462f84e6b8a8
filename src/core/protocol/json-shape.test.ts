import { describe, expect, it } from 'vitest';
import { expectAgreesWithParse, shapeName } from '../../../test/support/json-shape-oracle.js';
import { WASM_TEXT_BYTES } from './answer-scan.js';
import { JsonShape, jsonShape } from './json-shape.js';

const { invalid, object } = JsonShape;

describe('jsonShape tables', () => {
  it.each([
    // [text, verdict]
    ['{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":0},"id":1}', 'object'],
    ['{}', 'object'],
    [' \t\r\n{ \t\r\n} \t\r\n', 'object'],
    ['{"a":1,"a":2}', 'object'],
    ['{"a" : [ 1 , { "b" : null } ] , "c" : "d" }', 'object'],
    ['{"":""}', 'object'],
    ['[]', 'array'],
    ['[ ]', 'array'],
    ['[1,"a",true,false,null,{},[],-0.5e-7]', 'array'],
    ['[{"error":1}]', 'array'],
    ['""', 'scalar'],
    ['"  "', 'scalar'],
    ['0', 'scalar'],
    ['-0', 'scalar'],
    [' 7 ', 'scalar'],
    ['true', 'scalar'],
    ['false', 'scalar'],
    ['null', 'scalar'],
    ['1e400', 'scalar'],
    ['', 'invalid'],
    [' \t\r\n', 'invalid'],
    ['{', 'invalid'],
    ['}', 'invalid'],
    ['[', 'invalid'],
    ['[}', 'invalid'],
    ['{]', 'invalid'],
    ['[[]', 'invalid'],
    ['[]]', 'invalid'],
    ['{}{}', 'invalid'],
    ['{} x', 'invalid'],
    ['1 2', 'invalid'],
    ['\v1', 'invalid'],
    ['\f1', 'invalid'],
    ['\x00', 'invalid'],
    ['1\x00', 'invalid'],
    ['<html>bad gateway</html>', 'invalid'],
  ] as const)('%j → %s', (text, verdict) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it.each([
    ['{"a":1,}', 'invalid'],
    ['[1,]', 'invalid'],
    ['[,1]', 'invalid'],
    ['[1,,2]', 'invalid'],
    ['{,"a":1}', 'invalid'],
    ['{"a" 1}', 'invalid'],
    ['{"a":}', 'invalid'],
    ['{"a"}', 'invalid'],
    ['{"a":1 "b":2}', 'invalid'],
    ['{"a":1;"b":2}', 'invalid'],
    ['[1 2]', 'invalid'],
    ['{1:2}', 'invalid'],
    ['{a:1}', 'invalid'],
    ["{'a':1}", 'invalid'],
    ['{"a"::1}', 'invalid'],
  ] as const)('structure %j → %s', (text, verdict) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it.each([
    ['-1', 'scalar'],
    ['10', 'scalar'],
    ['1.5', 'scalar'],
    ['0.0', 'scalar'],
    ['1e5', 'scalar'],
    ['1E5', 'scalar'],
    ['1e+5', 'scalar'],
    ['1e-5', 'scalar'],
    ['-0.0e-0', 'scalar'],
    ['[0,-1]', 'array'],
    ['01', 'invalid'],
    ['-01', 'invalid'],
    ['00', 'invalid'],
    ['-', 'invalid'],
    ['+1', 'invalid'],
    ['1.', 'invalid'],
    ['.5', 'invalid'],
    ['-.5', 'invalid'],
    ['1.e5', 'invalid'],
    ['1e', 'invalid'],
    ['1e+', 'invalid'],
    ['1e-', 'invalid'],
    ['1e5.0', 'invalid'],
    ['1.5.0', 'invalid'],
    ['0x10', 'invalid'],
    ['--1', 'invalid'],
    ['- 1', 'invalid'],
    ['NaN', 'invalid'],
    ['Infinity', 'invalid'],
    ['-Infinity', 'invalid'],
    ['[1.]', 'invalid'],
    ['{"a":01}', 'invalid'],
  ] as const)('number %j → %s', (text, verdict) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it.each([
    ['tru', 'invalid'],
    ['nulll', 'invalid'],
    ['truex', 'invalid'],
    ['True', 'invalid'],
    ['nul', 'invalid'],
    ['fals', 'invalid'],
    ['[true,false,null]', 'array'],
    ['[nul]', 'invalid'],
  ] as const)('literal %j → %s', (text, verdict) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it.each([
    ['"\\"\\\\\\/\\b\\f\\n\\r\\t"', 'scalar'],
    ['"\\u0041\\uabcd\\uABCD\\ud800"', 'scalar'],
    ['"\\x"', 'invalid'],
    ['"\\a"', 'invalid'],
    ['"\\U0041"', 'invalid'],
    ['"\\u12"', 'invalid'],
    ['"\\u12G4"', 'invalid'],
    ['"\\u123"', 'invalid'],
    ['"\\', 'invalid'],
    ['"\\u', 'invalid'],
    ['"\\u1234', 'invalid'],
    ['"abc', 'invalid'],
    ['"', 'invalid'],
    ['"\t"', 'invalid'],
    ['"\n"', 'invalid'],
    ['"\x00"', 'invalid'],
    ['"\x1f"', 'invalid'],
    ['"\x7f"', 'scalar'],
    ['"é → 🙂 \u2028"', 'scalar'],
    ['"a"b"', 'invalid'],
  ] as const)('string %j → %s', (text, verdict) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it.each([
    ['BOM then object', [0xef, 0xbb, 0xbf, ...Buffer.from('{}')], 'invalid'],
    ['non-breaking space before the value', [0xc2, 0xa0, 0x31], 'invalid'],
    ['line separator after the value', [0x31, 0xe2, 0x80, 0xa8], 'invalid'],
    ['malformed UTF-8 inside a string', [0x22, 0xff, 0xc0, 0xe2, 0x80, 0x22], 'scalar'],
    ['a lead byte right before the closing quote', [0x22, 0xf0, 0x22], 'scalar'],
    ['overlong encoding of a quote', [0x22, 0xc0, 0xa2], 'invalid'],
    ['overlong encoding of a quote, closed', [0x22, 0xc0, 0xa2, 0x22], 'scalar'],
    ['malformed UTF-8 as a member name', [0x7b, 0x22, 0xfe, 0x22, 0x3a, 0x30, 0x7d], 'object'],
    ['a byte ≥ 0x80 outside strings', [0x5b, 0x80, 0x5d], 'invalid'],
  ] as const)('bytes: %s → %s', (_name, bytes, verdict) => {
    const input = Uint8Array.from(bytes);
    expect(shapeName(input)).toBe(verdict);
    expectAgreesWithParse(input);
  });

  it.each([
    ['{"error":null}', 'unsure'],
    ['{"error":{"code":-32000,"message":"x"}}', 'unsure'],
    ['{"jsonrpc":"2.0","error":{"code":-32601},"id":1}', 'unsure'],
    ['{ "error" : 1 }', 'unsure'],
    ['{"a":1,"error":1}', 'unsure'],
    ['{"error":1,"error":2}', 'unsure'],
    ['{"err\\u006fr":1}', 'unsure'],
    ['{"\\u0065rror":1}', 'unsure'],
    ['{"a\\nb":1}', 'unsure'],
    ['{"a":{"error":1}}', 'object'],
    ['{"result":{"error":1}}', 'object'],
    ['{"a":[{"error":1}],"b":{"c":{"error":2}}}', 'object'],
    ['{"a":"error"}', 'object'],
    ['{"a":"\\u0065rror"}', 'object'],
    ['{"a":{"\\u0065rror":1}}', 'object'],
    ['{"errors":1}', 'object'],
    ['{"Error":1}', 'object'],
    ['{"erro":1}', 'object'],
    ['{"rror":1}', 'object'],
    ['{"error ":1}', 'object'],
    ['"error"', 'scalar'],
    ['["error"]', 'array'],
    ['{"error":1,}', 'invalid'],
    ['{"error":1} x', 'invalid'],
    ['{"error":01}', 'invalid'],
    ['{"err\\u006fr":1', 'invalid'],
  ] as const)('top-level error key %j → %s', (text, verdict) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it.each([
    ['array nested 255 deep', 'array', `${'['.repeat(255)}1${']'.repeat(255)}`],
    ['objects nested 200 deep', 'object', `${'{"a":'.repeat(200)}1${'}'.repeat(200)}`],
    ['512 bytes at the depth limit', 'array', `${'['.repeat(256)}${']'.repeat(256)}`],
    ['unclosed 512 bytes', 'invalid', `${'['.repeat(257)}${']'.repeat(255)}`],
    // Past MAX_DEPTH the scan cannot match closers, so it leaves even broken texts to JSON.parse.
    ['unclosed nesting past the limit', 'unsure', '['.repeat(10_000)],
    ['nesting past the limit', 'unsure', `${'['.repeat(300)}1${']'.repeat(300)}`],
    [
      'error key next to deep nesting',
      'unsure',
      `{"a":${'['.repeat(200)}${']'.repeat(200)},"error":1}`,
    ],
    ['deep nesting under a plain object', 'object', `{"a":${'['.repeat(200)}${']'.repeat(200)}}`],
    ['mismatched closer deep down', 'invalid', `${'['.repeat(100)}${']'.repeat(99)}}`],
  ] as const)('depth: %s → %s', (_name, verdict, text) => {
    expect(shapeName(text)).toBe(verdict);
  });

  it('never returns unsure for nesting when the text is at most 512 bytes', () => {
    for (let depth = 250; depth <= 260; depth++) {
      const text = `${'['.repeat(depth)}${']'.repeat(Math.min(depth, 512 - depth))}`;
      expect(shapeName(text)).toBe(depth <= 256 ? 'array' : 'invalid');
    }
  });

  it('reads only its own bytes when given a view into a larger buffer', () => {
    const whole = Buffer.from('xx{"a":1}yy');
    expect(jsonShape(whole.subarray(2, 9))).toBe(object);
    expect(jsonShape(whole.subarray(2, 8))).toBe(invalid);
  });

  it('never reads a longer earlier text left in its memory as part of this one', () => {
    // The earlier text has the quote, brace and spaces just where the cut one stops.
    const whole = '{"a":"0123456789abcdefghijklmnopqrstuvwxyz"}  ';
    for (let cut = 0; cut <= whole.length; cut++) {
      shapeName(whole);
      expectAgreesWithParse(Buffer.from(whole.slice(0, cut)));
    }
    shapeName(`[${' '.repeat(40)}1]`);
    expect(shapeName('[')).toBe('invalid');
  });

  it('finds a string’s end at any offset of its sixteen-byte steps', () => {
    for (let length = 0; length <= 48; length++) {
      const inner = 'x'.repeat(length);
      expect(shapeName(`{"a":"${inner}"}`)).toBe('object');
      expect(shapeName(`{"a":"${inner}\\u0041"}`)).toBe('object');
      expect(shapeName(`{"a":"${inner}\\n"}`)).toBe('object');
      expect(shapeName(`{"a":"${inner}\\x"}`)).toBe('invalid');
      expect(shapeName(`{"a":"${inner}\t${inner}"}`)).toBe('invalid');
      expect(shapeName(`{"a":"${inner}`)).toBe('invalid');
      expect(shapeName(`{"${inner}":1}`)).toBe('object');
    }
  });

  it('parses a text larger than the scan’s memory instead, with the same verdicts', () => {
    const big = 'x'.repeat(WASM_TEXT_BYTES);
    expect(shapeName(`{"result":"${big}"}`)).toBe('object');
    expect(shapeName(`{"error":"${big}"}`)).toBe('unsure');
    expect(shapeName(`["${big}"]`)).toBe('array');
    expect(shapeName(`"${big}"`)).toBe('scalar');
    expect(shapeName(`{"result":"${big}"`)).toBe('invalid');
    expect(shapeName(`{"result":"${big}\\x"}`)).toBe('invalid');
  });

  it('keeps no state between calls', () => {
    expect(shapeName('{"error":1}')).toBe('unsure');
    expect(shapeName('{"a":1}')).toBe('object');
    expect(shapeName('[{"error":1}]')).toBe('array');
  });
});
