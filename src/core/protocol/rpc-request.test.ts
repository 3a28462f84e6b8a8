import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forRequestBodies, requestBodyText } from '../../../test/support/json-rpc-arbitraries.js';
import { MethodRegistry, UNKNOWN_METHOD_ID } from './method-registry.js';
import { packAsk, solanaAskOf } from './request-ask.js';
import { REQUEST_SCAN_BYTES } from './request-scan.js';
import {
  isNotification,
  parseRequest,
  parseRequestInJs,
  readIdJson,
  type ParseResult,
  type RpcRequest,
} from './rpc-request.js';

const registry = new MethodRegistry();
const parse = (text: string): ParseResult => parseRequest(Buffer.from(text, 'utf8'), registry);

function request(text: string): RpcRequest {
  const result = parse(text);
  if (!result.ok) throw new Error(`expected ${text} to parse, got ${result.problem}`);
  return result.request;
}

describe('parseRequest: single requests', () => {
  it.each<[string, string, string]>([
    ['the fast path', '{"method":"getBalance","id":1}', 'getBalance'],
    [
      'a method that is not the first key',
      '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
      'getSlot',
    ],
    ['an escaped name', '{"method":"get\\u0053lot"}', 'getSlot'],
    ['an escaped name after other keys', '{"id":1,"method":"\\u0067etSlot"}', 'getSlot'],
    ['a non-ASCII name', '{"method":"gétBalance"}', 'gétBalance'],
    ['an astral name', '{"method":"\\ud83d\\ude00"}', '😀'],
    ['a long name', `{"method":"${'x'.repeat(5000)}"}`, 'x'.repeat(5000)],
    ['an empty name', '{"method":""}', ''],
    ['an escaped key', '{"\\u006dethod":"getBalance"}', 'getBalance'],
    ['trailing whitespace', '{"id":1,"method":"getSlot"} \n', 'getSlot'],
    [
      'a repeated, escaped method key',
      '{"method":"getHealth","\\u006dethod":"getLargestAccounts"}',
      'getLargestAccounts',
    ],
    ['a nested method key', '{"method":"getSlot","params":{"method":"x"}}', 'getSlot'],
    [
      'a repeated method key (last wins, as JSON.parse)',
      '{"method":"getHealth","method":"getLargestAccounts"}',
      'getLargestAccounts',
    ],
  ])('reads the method from %s', (_case, text, method) => {
    const parsed = request(text);
    expect(parsed.method).toBe(method);
    expect(parsed.methodId).toBe(registry.idOf(method));
    expect(parsed.batch).toBeUndefined();
  });

  it('keeps the exact request bytes', () => {
    const body = Buffer.from('{"method":"getBalance","params":["addr"],"id":9}');
    const result = parseRequest(body, registry);
    expect(result.ok && result.request.body).toBe(body);
  });

  it('resolves standard, case-different and unknown names to the right ids', () => {
    expect(request('{"method":"getBalance"}').methodId).toBe(registry.idOf('getBalance'));
    expect(request('{"method":"getBalance"}').methodId).not.toBe(UNKNOWN_METHOD_ID);
    expect(request('{"method":"getbalance"}').methodId).toBe(UNKNOWN_METHOD_ID);
    expect(request('{"method":"eth_call"}').methodId).toBe(registry.idOf('eth_call'));
    expect(request('{"method":"Unknown"}').methodId).toBe(UNKNOWN_METHOD_ID);
  });

  it('resolves custom names interned in the registry it is given', () => {
    const own = new MethodRegistry();
    const id = own.intern('acme_getFoo');
    const result = parseRequest(Buffer.from('{"method":"acme_getFoo"}'), own);
    expect(result.ok && result.request.methodId).toBe(id);
  });

  it.each<[string, string, string]>([
    ['invalid JSON', '{"method":', 'null'],
    ['an empty body', '', 'null'],
    ['a number', '5', 'null'],
    ['a string', '"getBalance"', 'null'],
    ['null', 'null', 'null'],
    ['trailing garbage', '{"id":1,"method":"getSlot"} x', 'null'],
    ['no method', '{"id":7}', '7'],
    ['a numeric method', '{"id":"a","method":5}', '"a"'],
    ['a null method', '{"id":null,"method":null}', 'null'],
    ['an object id and no method', '{"id":{"x":1}}', 'null'],
    ['a raw control character in the method', '{"id":3,"method":"a\u0001b"}', 'null'],
    [
      'an id beyond 2^53 and a numeric method',
      '{"jsonrpc":"2.0","id":12345678901234567890,"method":123}',
      '12345678901234567890',
    ],
    ['a negative exponent id and no method', '{"id":-1.50e+3}', '-1.50e+3'],
    ['a boolean id and no method', '{"id":true}', 'null'],
  ])('rejects %s as a parse error echoing id %s', (_case, text, idJson) => {
    expect(parse(text)).toEqual({ ok: false, problem: 'parse_error', idJson });
  });
});

describe('parseRequest: batches', () => {
  it('parses each element of a batch', () => {
    const parsed = request(
      '[{"jsonrpc":"2.0","id":1,"method":"getBalance"}, {"id":"b","method":"getSlot"},' +
        '{"method":"acme_notify"}]',
    );
    expect(parsed.method).toBe('getBalance');
    expect(parsed.methodId).toBe(registry.idOf('getBalance'));
    expect(
      parsed.batch!.map(({ method, methodId, idJson }) => ({ method, methodId, idJson })),
    ).toEqual([
      { method: 'getBalance', methodId: registry.idOf('getBalance'), idJson: '1' },
      { method: 'getSlot', methodId: registry.idOf('getSlot'), idJson: '"b"' },
      { method: 'acme_notify', methodId: UNKNOWN_METHOD_ID, idJson: undefined },
    ]);
    expect(parsed.batch![1]!.value).toEqual({ id: 'b', method: 'getSlot' });
  });

  it('reads a one-element batch as a batch', () => {
    const parsed = request('[{"id":1,"method":"getSlot"}]');
    expect(parsed.batch).toHaveLength(1);
    expect(parsed.method).toBe('getSlot');
  });

  it('rejects an empty batch', () => {
    expect(parse('[]')).toEqual({ ok: false, problem: 'empty_batch', idJson: 'null' });
    expect(parse(' [ ] ')).toEqual({ ok: false, problem: 'empty_batch', idJson: 'null' });
  });

  it('marks elements that are not request objects, keeping a readable id', () => {
    const parsed = request(
      '[1, "getBalance", null, [], {"id":4,"method":5}, {"id":5,"method":"getSlot"}]',
    );
    expect(
      parsed.batch!.map(({ method, methodId, idJson }) => ({ method, methodId, idJson })),
    ).toEqual([
      { method: undefined, methodId: UNKNOWN_METHOD_ID, idJson: 'null' },
      { method: undefined, methodId: UNKNOWN_METHOD_ID, idJson: 'null' },
      { method: undefined, methodId: UNKNOWN_METHOD_ID, idJson: 'null' },
      { method: undefined, methodId: UNKNOWN_METHOD_ID, idJson: 'null' },
      { method: undefined, methodId: UNKNOWN_METHOD_ID, idJson: '4' },
      { method: 'getSlot', methodId: registry.idOf('getSlot'), idJson: '5' },
    ]);
    expect(parsed.method).toBe('');
  });

  it("keeps an invalid element's id exactly as written, for its -32600 answer", () => {
    const parsed = request(
      '[{"jsonrpc":"2.0","id":12345678901234567890,"method":7},' +
        '{"jsonrpc":"2.0","id":"a\\u0041","method":7},{"id":1.50,"method":7},' +
        '{"id":true,"method":7},{"id":{"a":1},"method":7},{"method":7}]',
    );
    expect(parsed.batch!.map(({ method, idJson }) => ({ method, idJson }))).toEqual([
      { method: undefined, idJson: '12345678901234567890' },
      { method: undefined, idJson: '"a\\u0041"' },
      { method: undefined, idJson: '1.50' },
      { method: undefined, idJson: 'null' },
      { method: undefined, idJson: 'null' },
      { method: undefined, idJson: 'null' },
    ]);
  });

  it('keeps a numeric id of 309 digits and more (Infinity to JSON.parse) as written', () => {
    for (const digits of [308, 309, 400]) {
      const id = '9'.repeat(digits);
      const parsed = request(
        `[{"id":${id},"method":"getSlot"},{"id":-${id}e2,"method":"getSlot"}]`,
      );
      expect(parsed.batch!.map((element) => element.idJson)).toEqual([id, `-${id}e2`]);
    }
  });

  it('does not route CascadeRPC\'s ["getBalance"] quirk as a getBalance call', () => {
    const parsed = request('["getBalance"]');
    expect(parsed.batch).toEqual([
      { method: undefined, methodId: UNKNOWN_METHOD_ID, idJson: 'null', value: 'getBalance' },
    ]);
  });

  it('rejects a batch that is not valid JSON', () => {
    expect(parse('[{"method":"getSlot"},')).toEqual({
      ok: false,
      problem: 'parse_error',
      idJson: 'null',
    });
  });
});

describe('parseRequest (property)', () => {
  it('returns exactly the method JSON.parse sees for any object with a string method', () => {
    fc.assert(
      fc.property(requestBodyText, (text) => {
        const parsed = JSON.parse(text) as { method: string };
        const result = parseRequest(Buffer.from(text, 'utf8'), registry);
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(result.request.method).toBe(parsed.method);
        expect(result.request.methodId).toBe(registry.idOf(parsed.method));
        expect(result.request.batch).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  it('returns the method of any JSON object with a string method, however serialised', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
        fc.string({ unit: 'binary' }),
        fc.nat(8),
        (rest, method, indent) => {
          const text = JSON.stringify({ ...rest, method }, null, indent);
          const result = parseRequest(Buffer.from(text, 'utf8'), registry);
          expect(result.ok && result.request.method).toBe(method);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(() => parseRequest(Buffer.from(bytes), registry)).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });
});

/**
 * What a parse result says, with the head ask resolved as read-heads.ts resolves it (a parse
 * that left it undefined is read with solanaAskOf later).
 */
function readOf(body: Buffer, result: ParseResult): unknown {
  if (!result.ok) return result;
  const { method, methodId, batch, headAsk } = result.request;
  expect(result.request.body).toBe(body);
  return {
    method,
    methodId,
    batch,
    headAsk: batch === undefined ? (headAsk ?? solanaAskOf(body)) : undefined,
  };
}

/** parseRequest (wasm paths first) reads `body` exactly as the JavaScript path does. */
function expectAsInJs(body: Buffer): void {
  const here = readOf(body, parseRequest(body, registry));
  expect(here).toEqual(readOf(body, parseRequestInJs(body, registry)));
}

describe('parseRequest: a method after other members, read by the wasm validator', () => {
  it.each<[string, string]>([
    [
      "most clients' order",
      '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["a",{"commitment":"confirmed"}]}',
    ],
    [
      'the ask before the method',
      '{"params":[{"minContextSlot":12,"commitment":"processed"}],"method":"getSlot"}',
    ],
    ['a nested method member', '{"id":"x","params":{"method":"nested"},"method":"getSlot"}'],
    ['whitespace everywhere', ' { "id" : 1 ,\n "method" :\t"getSlot" } '],
    ['a name of 200 bytes', `{"id":1,"method":"${'m'.repeat(200)}"}`],
    ['escapes in other values', '{"id":"\\u0041\\n","params":["\\"method\\""],"method":"getSlot"}'],
  ])('reads %s', (_case, text) => {
    const body = Buffer.from(text, 'latin1');
    // The ask comes with the method only from the wasm path (JavaScript leaves it for later).
    expect(parseRequest(body, registry)).toMatchObject({
      ok: true,
      request: { headAsk: solanaAskOf(body) },
    });
    expectAsInJs(body);
  });

  it.each<[string, string]>([
    ['invalid JSON after the method', '{"id":1,"method":"getSlot",]'],
    ['trailing garbage', '{"id":1,"method":"getSlot"}x'],
    ['a second method member', '{"id":1,"method":"getSlot","method":"getHealth"}'],
    ['an escaped method key', '{"id":1,"\\u006dethod":"getSlot"}'],
    ['an escape in the name', '{"id":1,"method":"get\\u0053lot"}'],
    ['a method that is not a string', '{"id":7,"method":5}'],
    ['no method', '{"id":7,"params":[]}'],
    ['a method member only inside params', '{"id":7,"params":{"method":"nested"}}'],
    ['a top-level error member', '{"error":1,"method":"getSlot"}'],
    ['a cut body', '{"id":1,"method":"getSl'],
  ])('agrees with the JavaScript path on %s', (_case, text) => {
    expectAsInJs(Buffer.from(text, 'latin1'));
  });

  it('reads the head ask with the method, so admission needs no second search', () => {
    // The JavaScript path leaves it for read-heads.ts (solanaAskOf) to find at admission.
    const text =
      '{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"processed","minContextSlot":77}]}';
    expect(parseRequestInJs(Buffer.from(text), registry)).toMatchObject({
      ok: true,
      request: { method: 'getSlot', headAsk: undefined },
    });
    expect(request(text).headAsk).toBe(packAsk(0, 77));
  });

  it('gives the same string while the name repeats, whichever scan found it', () => {
    const first = request('{"id":1,"method":"getBalance"}').method;
    expect(request('{"id":2,"method":"getBalance"}').method).toBe(first);
    expect(request('{"method":"getBalance","id":3}').method).toBe(first);
    expect(request('{"id":4,"method":"getBalancf"}').method).toBe('getBalancf');
    expect(request('{"method":"getBalance"}').method).toBe('getBalance');
    expect(request(`{"id":5,"method":"${'n'.repeat(129)}"}`).method).toBe('n'.repeat(129));
    expect(request('{"method":"getBalance"}').method).toBe('getBalance');
  });
});

describe('parseRequest (property): the wasm paths read what the JavaScript path reads', () => {
  it('on request bodies of every order, whole and cut short', () => {
    forRequestBodies(REQUEST_SCAN_BYTES, 3000, expectAsInJs);
  });

  it('on bodies with a broken byte anywhere', () => {
    const broken = fc.constantFrom(
      ',',
      ']',
      '}',
      '{',
      '"',
      '\\',
      ':',
      'x',
      ' ',
      '0',
      '\t',
      '\u0001',
    );
    fc.assert(
      fc.property(requestBodyText, fc.nat(), broken, (text, at, byte) => {
        fc.pre(text.length > 0);
        const i = at % text.length;
        expectAsInJs(Buffer.from(`${text.slice(0, i)}${byte}${text.slice(i + 1)}`, 'utf8'));
        expectAsInJs(Buffer.from(`${text.slice(0, i)}${byte}${text.slice(i)}`, 'utf8'));
      }),
      { numRuns: 3000 },
    );
  });

  it('on objects of any members, however serialised', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
        fc.option(fc.string({ unit: 'grapheme-ascii', maxLength: 12 })),
        fc.nat(4),
        (rest, method, indent) => {
          const value = method === null ? rest : { ...rest, method };
          expectAsInJs(Buffer.from(JSON.stringify(value, null, indent), 'utf8'));
        },
      ),
      { numRuns: 1500 },
    );
  });
});

const requestOf = (text: string): RpcRequest => ({
  body: Buffer.from(text),
  method: 'x',
  methodId: -1,
  batch: undefined,
});

describe('readIdJson', () => {
  it.each<[string, string]>([
    ['{"id":1,"method":"x"}', '1'],
    ['{"id":"abc"}', '"abc"'],
    ['{"id":null}', 'null'],
    ['{"id":1.5}', '1.5'],
    ['{"id":true}', 'null'],
    ['{"id":[1]}', 'null'],
    ['{"id":{"a":1}}', 'null'],
    ['{"method":"x"}', 'null'],
    ['[{"id":1}]', 'null'],
    ['not json', 'null'],
    ['', 'null'],
    // The client's bytes, not a re-serialisation: integers beyond 2^53 and fractions survive.
    ['{"method":"x","id":12345678901234567890}', '12345678901234567890'],
    ['{"method":"x","id":1.50}', '1.50'],
    ['{"method":"x","id":-0}', '-0'],
    ['{"method":"x","id":"a\\"b"}', '"a\\"b"'],
    // A key the byte scan cannot read falls back to the parser.
    ['{"method":"x","\\u0069d":7}', '7'],
  ])('reads the id of %s as %s', (text, idJson) => {
    expect(readIdJson(requestOf(text))).toBe(idJson);
  });
});

describe('isNotification', () => {
  it.each<[string, boolean]>([
    ['{"jsonrpc":"2.0","method":"getSlot"}', true],
    ['{"jsonrpc":"2.0","method":"getSlot","params":[{"id":1}]}', true],
    ['{"jsonrpc":"2.0","method":"getSlot","id":null}', false],
    ['{"jsonrpc":"2.0","method":"getSlot","id":0}', false],
    ['{"jsonrpc":"2.0","method":"getSlot","\\u0069d":0}', false],
  ])('%s → %s', (text, expected) => {
    expect(isNotification(requestOf(text))).toBe(expected);
  });
});

describe('parseRequest refuses bytes that are not UTF-8 (RFC 8259 §8.1)', () => {
  it.each([
    [
      'a lone continuation byte in the method',
      Buffer.from([...Buffer.from('{"method":"'), 0x80, ...Buffer.from('"}')]),
    ],
    [
      'an overlong encoding in params',
      Buffer.concat([
        Buffer.from('{"method":"getSlot","params":["'),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('"]}'),
      ]),
    ],
    [
      'a truncated sequence at the end',
      Buffer.concat([Buffer.from('{"method":"getSlot","x":"'), Buffer.from([0xe2, 0x82])]),
    ],
  ])('%s', (_name, body) => {
    const parsed = parseRequest(body, new MethodRegistry());
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toBe('parse_error');
  });
});
