import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JsonMembers,
  cycle,
  jsonWhitespace,
  forRequestBodies,
  serialiseJson,
} from '../../../test/support/json-rpc-arbitraries.js';
import { scanMethod, scanned } from './method-scan.js';
import { packAsk, solanaAskOf } from './request-ask.js';
import { REQUEST_SCAN_BYTES, SCAN_METHOD, requestScan, scanRequest } from './request-scan.js';

/**
 * What the JavaScript path reads of `body`: isUtf8, then scanMethod and its head ask — or, when
 * the scan left the ask for later (a long rest), what read-heads.ts then reads (solanaAskOf).
 */
function reference(body: Buffer): { method: string; headAsk: number | undefined } | undefined {
  if (!isUtf8(body)) return undefined;
  const method = scanMethod(body);
  if (method === undefined) return undefined;
  return { method, headAsk: scanned.headAsk ?? solanaAskOf(body) };
}

/** What the WebAssembly scan reads of `body`, in the same form. */
function scannedHere(body: Buffer): { method: string; headAsk: number | undefined } | undefined {
  return scanRequest(body) === SCAN_METHOD
    ? { method: requestScan.method, headAsk: requestScan.headAsk }
    : undefined;
}

const isAscii = (body: Buffer): boolean => body.every((byte) => byte < 0x80);

/**
 * The scan must read exactly what the JavaScript path reads, for every all-ASCII body; for any
 * other body it must not answer (the JavaScript path then decides).
 */
function expectAgreement(body: Buffer): void {
  const here = scannedHere(body);
  if (!isAscii(body)) {
    expect(here).toBeUndefined();
    return;
  }
  expect(here).toEqual(reference(body));
}

const scanText = (text: string) => scannedHere(Buffer.from(text, 'latin1'));

describe('scanRequest', () => {
  it.each<[string, string, string, number]>([
    ['a plain request', '{"method":"getBalance"}', 'getBalance', packAsk(2, -1)],
    [
      'web3.js getBalance',
      '{"method":"getBalance","jsonrpc":"2.0","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3U4VAbW9",{"commitment":"confirmed"}],"id":"1"}',
      'getBalance',
      packAsk(1, -1),
    ],
    [
      'processed with a minContextSlot',
      '{ "method" : "getSlot", "params":[{"commitment":"processed","minContextSlot":  1234}]}',
      'getSlot',
      packAsk(0, 1234),
    ],
    ['the method named as a token', '{"method":"confirmed"}', 'confirmed', packAsk(1, -1)],
    ['the method named "method"', '{"method":"method"}', 'method', packAsk(2, -1)],
    [
      'whitespace everywhere',
      ' \t\r\n{ \n"method" \t: \r\n "getSlot" }',
      'getSlot',
      packAsk(2, -1),
    ],
    ['an empty name', '{"method":""}', '', packAsk(2, -1)],
    ['a name of 128 bytes', `{"method":"${'m'.repeat(128)}"}`, 'm'.repeat(128), packAsk(2, -1)],
    [
      'the ask far after the name',
      `{"method":"getSlot","params":["${'a'.repeat(200)}",{"commitment":"confirmed","minContextSlot":9}]}`,
      'getSlot',
      packAsk(1, 9),
    ],
  ])('reads %s', (_case, body, method, headAsk) => {
    expect(scanText(body)).toEqual({ method, headAsk });
    expectAgreement(Buffer.from(body, 'latin1'));
  });

  it.each<[string, string]>([
    ['a second method key', '{"method":"getHealth","method":"getSlot"}'],
    ['a \\u escape after the name', '{"method":"getSlot","params":["\\u00e9"]}'],
    ['a non-ASCII byte after the name', '{"method":"getSlot","params":["é"]}'],
    ['a non-ASCII name', '{"method":"gétSlot"}'],
    ['the method key not first', '{"id":1,"method":"getSlot"}'],
    ['an escape in the name', '{"method":"get\\"Slot"}'],
    ['a raw control byte in the name', '{"method":"get\tSlot"}'],
    ['a name longer than 128 bytes', `{"method":"${'m'.repeat(129)}"}`],
    ['an unterminated name', '{"method":"getSl'],
    ['a truncated key', '{"meth'],
    ['a batch', '[{"method":"getSlot"}]'],
    ['an empty body', ''],
  ])('leaves %s to the parser', (_case, body) => {
    expect(scanText(body)).toBeUndefined();
    expectAgreement(Buffer.from(body, 'utf8'));
  });

  it('gives the same string while the method repeats, and a new one when it changes', () => {
    const first = scanText('{"method":"getBalance","id":1}')!.method;
    const again = scanText('{"method":"getBalance","id":2}')!.method;
    expect(again).toBe(first);
    expect(scanText('{"method":"getBalancf"}')!.method).toBe('getBalancf');
    expect(scanText('{"method":"getBalance"}')!.method).toBe('getBalance');
    // A body the scan refuses leaves the last name alone.
    expect(scanText('{"method":"getSlot","method":"x"}')).toBeUndefined();
    expect(scanText('{"method":"getBalance"}')!.method).toBe('getBalance');
    expect(scanText('{"method":"getBalanc"}')!.method).toBe('getBalanc');
  });

  it('never reads bytes an earlier, longer body left behind', () => {
    const long = Buffer.from(`{"method":"getSlot","params":[${'"method",'.repeat(40)}0]}`);
    expect(scannedHere(long)).toBeUndefined();
    // The short body ends where the long one had `"method"` keys and `\u`s.
    expect(scanText('{"method":"getSlot"')).toEqual({ method: 'getSlot', headAsk: packAsk(2, -1) });
    scannedHere(Buffer.from(`{"method":"a","x":"${'\\u0041'.repeat(50)}"}`));
    expect(scanText('{"method":"getSlot","a":"')).toEqual({
      method: 'getSlot',
      headAsk: packAsk(2, -1),
    });
  });
});

describe('scanRequest (property): reads what the JavaScript scan reads', () => {
  it('on request bodies of every shape, whole and cut short', () => {
    forRequestBodies(REQUEST_SCAN_BYTES, 3000, expectAgreement);
  });

  it('on bodies dense in the tokens it looks for, near each edge', () => {
    const token = fc.constantFrom(
      '"method"',
      '"confirmed"',
      '"processed"',
      '"minContextSlot"',
      '"minContextSlot":7',
      '"minContextSlot" : 42,',
      '\\u',
      '\\',
      '"',
      'method',
      '"confirme',
      '"minContextSlo',
      ':',
      ' ',
    );
    const name = fc.oneof(
      fc.constantFrom('getBalance', 'confirmed', 'processed', 'minContextSlot', 'method', ''),
      fc.stringMatching(/^[\x20-\x7e]{0,12}$/),
    );
    fc.assert(
      fc.property(
        name,
        fc.array(token, { maxLength: 12 }),
        fc.nat({ max: 200 }),
        jsonWhitespace,
        (method, tokens, padding, spaces) => {
          const head = serialiseJson(new JsonMembers([['method', method]]), cycle(spaces));
          // The rest either side of 160 bytes after the name, tokens at its end.
          const text = `${head.slice(0, -1)},"pad":"${'p'.repeat(padding)}"${tokens.join('')}`;
          const body = Buffer.from(text, 'latin1');
          expectAgreement(body);
          for (let end = body.length - 20; end <= body.length; end++) {
            if (end > 0) expectAgreement(body.subarray(0, end));
          }
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('on arbitrary bytes, and after each of them the next body is read afresh', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom('{"method":"getSlot"}', '{"method":"getSlot","params":[]}'),
        (bytes, next) => {
          expectAgreement(Buffer.from(bytes));
          expectAgreement(Buffer.from(next));
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('at the size limit', () => {
    const head = '{"method":"getSlot","params":["';
    const fill = (n: number) =>
      Buffer.from(`${head}${'a'.repeat(n - head.length - 3)}"]}`, 'latin1');
    const atLimit = fill(REQUEST_SCAN_BYTES);
    expect(atLimit.length).toBe(REQUEST_SCAN_BYTES);
    expect(scannedHere(atLimit)?.method).toBe('getSlot');
    expectAgreement(atLimit);
  });
});
