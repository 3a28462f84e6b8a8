/**
 * fast-check arbitraries for JSON-RPC request bodies: members in random order, random JSON
 * whitespace between tokens, method names from plain ASCII to escapes and astral characters,
 * and (sometimes) a repeated `method` key, which JSON text allows and JSON.parse resolves
 * last-wins.
 */
import fc from 'fast-check';
import { STANDARD_METHODS } from '../../src/core/protocol/method-registry.js';

/** JSON text written verbatim (e.g. a key spelled with escapes: `"\\u006dethod"`). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** An object as an ordered list of members; may repeat a key, as JSON text can. */
export class JsonMembers {
  constructor(readonly pairs: ReadonlyArray<readonly [string | RawJson, unknown]>) {}
}

/** Serialises `value` with `ws()` between every pair of tokens; objects keep member order. */
export function serialiseJson(value: unknown, ws: () => string = () => ''): string {
  if (Array.isArray(value)) {
    return `[${ws()}${value.map((item) => serialiseJson(item, ws)).join(`${ws()},${ws()}`)}${ws()}]`;
  }
  if (value instanceof RawJson) return value.text;
  if (value instanceof JsonMembers) {
    const members = value.pairs.map(
      ([key, item]) => `${serialiseJson(key, ws)}${ws()}:${ws()}${serialiseJson(item, ws)}`,
    );
    return `{${ws()}${members.join(`${ws()},${ws()}`)}${ws()}}`;
  }
  if (value !== null && typeof value === 'object') {
    return serialiseJson(new JsonMembers(Object.entries(value)), ws);
  }
  return JSON.stringify(value);
}

/** Runs of JSON whitespace (space, tab, CR, LF), cycled through by `cycle`. */
export const jsonWhitespace = fc.array(fc.stringMatching(/^[ \t\r\n]{0,3}$/), {
  minLength: 1,
  maxLength: 8,
});

/** A `ws()` that hands out `spaces` in turn. */
export function cycle(spaces: readonly string[]): () => string {
  let k = 0;
  return () => spaces[k++ % spaces.length] ?? '';
}

/** Method names: standard ones, printable ASCII, any code points (quotes, backslashes), long. */
export const methodName = fc.oneof(
  fc.constantFrom(...STANDARD_METHODS),
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('get\u0053lot', 'a"b', 'back\\slash', 'ümlaut', '😀', '', 'm'.repeat(200)),
);

/** JSON-RPC-like members other than a top-level `method`. */
export const otherMember: fc.Arbitrary<readonly [string, unknown]> = fc.oneof(
  fc.constant(['jsonrpc', '2.0'] as const),
  fc.tuple(fc.constant('id'), fc.oneof(fc.integer(), fc.string(), fc.constant(null))),
  fc.tuple(fc.constant('params'), fc.jsonValue({ maxDepth: 2 })),
  fc.tuple(fc.constant('params'), fc.constant({ method: 'nested' })),
  fc.tuple(
    fc.string({ maxLength: 8 }).filter((key) => key !== 'method'),
    fc.jsonValue({ maxDepth: 1 }),
  ),
);

/** The key `method` as JSON text: plain, or with some letters written as `\\u` escapes. */
export const methodKey: fc.Arbitrary<string | RawJson> = fc.oneof(
  fc.constant('method'),
  fc
    .array(fc.boolean(), { minLength: 6, maxLength: 6 })
    .map(
      (escape) =>
        new RawJson(
          `"${[...'method']
            .map((c, i) => (escape[i] ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
            .join('')}"`,
        ),
    ),
);

/**
 * One request body as text: `method` first or not, sometimes a second `method` member (plain
 * or escaped).
 */
export const requestBodyText = fc
  .record({
    method: methodName,
    duplicate: fc.option(fc.tuple(methodKey, methodName), { freq: 4 }),
    methodFirst: fc.boolean(),
    members: fc.array(otherMember, { maxLength: 4 }),
    spaces: jsonWhitespace,
  })
  .map(({ method, duplicate, methodFirst, members, spaces }) => {
    const pairs: Array<readonly [string | RawJson, unknown]> = [...members];
    pairs.splice(methodFirst ? 0 : pairs.length, 0, ['method', method]);
    if (duplicate !== null) pairs.push(duplicate);
    const ws = cycle(spaces);
    return `${ws()}${serialiseJson(new JsonMembers(pairs), ws)}${ws()}`;
  });

/**
 * Runs `check` on generated request bodies (requestBodyText, UTF-8) of at most `maxBytes`,
 * each whole and cut short at a generated length.
 */
export function forRequestBodies(
  maxBytes: number,
  numRuns: number,
  check: (body: Buffer) => void,
): void {
  fc.assert(
    fc.property(requestBodyText, fc.nat(), (text, cut) => {
      const body = Buffer.from(text, 'utf8');
      fc.pre(body.length <= maxBytes);
      check(body);
      check(body.subarray(0, cut % (body.length + 1)));
    }),
    { numRuns },
  );
}
