import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonMembers,
  cycle,
  jsonWhitespace,
  otherMember,
  requestBodyText,
  serialiseJson,
} from '../../../test/support/json-rpc-arbitraries.js';
import { commitmentOf, minContextSlotOf } from './head-scan.js';
import { scanMethod, scanned as methodScan } from './method-scan.js';
import { packAsk } from './request-ask.js';

const scan = (text: string) => scanMethod(Buffer.from(text, 'utf8'));

describe('scanMethod', () => {
  it.each<[string, string, string]>([
    ['a plain request', '{"method":"getBalance"}', 'getBalance'],
    ['a full request', '{"method":"getSlot","jsonrpc":"2.0","id":1,"params":[]}', 'getSlot'],
    ['leading whitespace', ' \t\r\n{"method":"getSlot"}', 'getSlot'],
    ['whitespace around every token', '{ \n"method" \t: \r\n "getSlot" , "id":1}', 'getSlot'],
    ['an empty name', '{"method":""}', ''],
    ['an EVM name', '{"method":"eth_getBalance","params":["0x0","latest"]}', 'eth_getBalance'],
    ['a name with spaces and symbols', '{"method":"a b/c:d{e}"}', 'a b/c:d{e}'],
    ['a broken tail it never reads', '{"method":"getBalance", <garbage', 'getBalance'],
    ['a name of 128 bytes', `{"method":"${'m'.repeat(128)}"}`, 'm'.repeat(128)],
    ['a long plain rest', `{"method":"getSlot","params":["${'a'.repeat(2000)}"]}`, 'getSlot'],
    ['a near-miss key in the rest', '{"method":"getSlot","methods":1,"\\n":2}', 'getSlot'],
  ])('reads %s', (_case, body, method) => {
    expect(scan(body)).toBe(method);
  });

  it.each<[string, string]>([
    ['the method key not first', '{"id":1,"method":"getBalance"}'],
    ['an escape in the name', '{"method":"get\\u0053lot"}'],
    ['an escaped quote in the name', '{"method":"a\\"b"}'],
    ['a non-ASCII name', '{"method":"gétBalance"}'],
    ['a raw control character in the name', '{"method":"get\tSlot"}'],
    ['an unterminated name', '{"method":"getBal'],
    ['a name longer than 128 bytes', `{"method":"${'m'.repeat(129)}"}`],
    ['a very long name', `{"method":"${'m'.repeat(10_000)}"}`],
    ['a non-string method', '{"method":5}'],
    ['a null method', '{"method":null}'],
    ['a differently cased key', '{"Method":"getBalance"}'],
    ['a longer key', '{"methods":"getBalance"}'],
    ['an escaped key', '{"\\u006dethod":"getBalance"}'],
    ['a missing colon', '{"method" "getBalance"}'],
    ['a truncated key', '{"meth'],
    ['a truncated value', '{"method":'],
    ['a batch', '[{"method":"getBalance"}]'],
    ['a top-level string array', '["getBalance"]'],
    ['an empty body', ''],
    ['only whitespace', ' \n\t'],
    ['a byte-order mark', '\uFEFF{"method":"getBalance"}'],
    ['a non-JSON space before the brace', '\u00A0{"method":"getBalance"}'],
    ['a second method key', '{"method":"getHealth","method":"getLargestAccounts"}'],
    ['a second method key after other keys', '{"method":"getHealth","id":1,  "method" :"x"}'],
    ['a second, escaped method key', '{"method":"getHealth","\\u006dethod":"getLargestAccounts"}'],
    ['a \\u escape after the name', '{"method":"getSlot","params":["\\u00e9"]}'],
    ['a nested method key', '{"method":"getSlot","params":{"method":"x"}}'],
    ['a second method key at the end', '{"method":"getSlot","params":["x"],"method":"y"}'],
    ['a \\u escape in the last bytes', '{"method":"getSlot","params":["x\\u0041"]}'],
    [
      'a second method key after a long value',
      `{"method":"getSlot","params":["${'a'.repeat(2000)}"],"method":"y"}`,
    ],
    [
      'a \\u escape after a long value',
      `{"method":"getSlot","params":["${'a'.repeat(2000)}\\u0041"]}`,
    ],
    // Either side of the size where the check switches from a JS walk to native searches.
    ...[300, 383, 384, 385, 500].map((n): [string, string] => [
      `a second method key ${n} bytes after the name`,
      `{"method":"getSlot","x":"${'a'.repeat(n - 22)}","method":"y"}`,
    ]),
  ])('leaves %s to the full parser', (_case, body) => {
    expect(scan(body)).toBeUndefined();
  });
});

function parsedMethod(text: string): { ok: true; method: unknown } | { ok: false } {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false };
    return { ok: true, method: (value as Record<string, unknown>).method };
  } catch {
    return { ok: false };
  }
}

describe('scanMethod (property)', () => {
  it('agrees with JSON.parse whenever it returns a name and the body is valid JSON', () => {
    fc.assert(
      fc.property(requestBodyText, fc.nat(), (text, cut) => {
        const body = Buffer.from(text, 'utf8');
        // Also check truncated bodies: the scan may answer, JSON.parse must then fail.
        for (const bytes of [body, body.subarray(0, cut % (body.length + 1))]) {
          const scanned = scanMethod(bytes);
          if (scanned === undefined) continue;
          const parsed = parsedMethod(bytes.toString('utf8'));
          if (parsed.ok) expect(scanned).toBe(parsed.method);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('finds a leading plain ASCII method in any whitespace layout', () => {
    const plain = fc.stringMatching(/^[\x20-\x21\x23-\x5b\x5d-\x7e]{0,128}$/);
    fc.assert(
      fc.property(
        plain,
        jsonWhitespace,
        fc.array(otherMember, { maxLength: 3 }),
        (method, spaces, rest) => {
          const body = serialiseJson(new JsonMembers([['method', method], ...rest]), cycle(spaces));
          // A second `"method"` or a `\u` escape sends the body to the full parser instead.
          fc.pre(body.indexOf('"method"') === body.lastIndexOf('"method"'));
          fc.pre(!body.includes('\\u'));
          expect(scanMethod(Buffer.from(body))).toBe(method);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads the same head ask as the native searches of a large body (request-ask.ts)', () => {
    // Names and values that are the ask's own tokens, anywhere: the method name itself too.
    const token = fc.constantFrom('confirmed', 'processed', 'minContextSlot', 'method', 'x');
    const value = fc.oneof(token, fc.nat({ max: 10_000_000 }), fc.constant('a\\u0041'));
    fc.assert(
      fc.property(
        token,
        fc.array(fc.tuple(token, value), { maxLength: 4 }),
        jsonWhitespace,
        (method, members, spaces) => {
          const body = Buffer.from(
            serialiseJson(new JsonMembers([['method', method], ...members]), cycle(spaces)),
          );
          const found = scanMethod(body);
          if (found === undefined || methodScan.headAsk === undefined) return;
          expect(methodScan.headAsk).toBe(packAsk(commitmentOf(body), minContextSlotOf(body)));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const result = scanMethod(Buffer.from(bytes));
        expect(result === undefined || typeof result === 'string').toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
