import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonShape, jsonShape } from './json-shape.js';

const { invalid, object, array, scalar, unsure } = JsonShape;
const NAMES = ['invalid', 'object', 'array', 'scalar', 'unsure'];

const bytesOf = (text: string | Uint8Array): Uint8Array =>
  typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
const shapeName = (text: string | Uint8Array): string => NAMES[jsonShape(bytesOf(text))]!;

type Parsed = { ok: true; value: unknown } | { ok: false };

/** The oracle: what the code this replaces would see. */
function parse(bytes: Uint8Array): Parsed {
  try {
    return { ok: true, value: JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown };
  } catch {
    return { ok: false };
  }
}

const isObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const kindOf = (value: unknown): number =>
  Array.isArray(value) ? array : isObject(value) ? object : scalar;

/** The verdict is consistent with JSON.parse; `unsure` only for valid objects. */
/**
 * The property tests call this tens of thousands of times: it compares plainly and builds an
 * assertion (with the input as its message) only on a mismatch, so their run time is the
 * scanner's and JSON.parse's rather than the assertion library's.
 */
function expectAgreesWithParse(bytes: Uint8Array): void {
  const shape = jsonShape(bytes);
  const parsed = parse(bytes);
  const text = (): string => Buffer.from(bytes).toString('utf8');
  if (!parsed.ok) {
    if (shape !== invalid) expect(NAMES[shape], text()).toBe('invalid');
    return;
  }
  const { value } = parsed;
  const seen = shape === unsure ? object : shape;
  if (seen !== kindOf(value)) expect(NAMES[seen], text()).toBe(NAMES[kindOf(value)]);
  if (shape === object && Object.hasOwn(value as object, 'error')) {
    expect(Object.hasOwn(value as object, 'error'), text()).toBe(false);
  }
}

/** The exact verdict for a value serialized by JSON.stringify (escapes only where needed). */
function expectedShape(value: unknown): number {
  if (!isObject(value)) return kindOf(value);
  const suspect = Object.keys(value).some((k) => k === 'error' || JSON.stringify(k).includes('\\'));
  return suspect ? unsure : object;
}

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

  it('keeps no state between calls', () => {
    expect(shapeName('{"error":1}')).toBe('unsure');
    expect(shapeName('{"a":1}')).toBe('object');
    expect(shapeName('[{"error":1}]')).toBe('array');
  });
});

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
