/**
 * Property test through the real server: whatever a client sends, healthy nodes stay healthy.
 * Random bodies — valid requests, notifications, batches with odd members, bytes that are not
 * UTF-8, odd ids (null, strings, big integers, fractions), unknown methods, bad params — never
 * penalize a node, never get a 502/504, and never dial more nodes than the request needs.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  JsonMembers,
  RawJson,
  cycle,
  jsonWhitespace,
  methodName,
  requestBodyText,
  serialiseJson,
} from '../support/json-rpc-arbitraries.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';

const ODD_IDS = [
  'null',
  '0',
  '-1',
  '"x"',
  '""',
  '"\\u0000"',
  '12345678901234567890',
  '1.5',
  '1e3',
  '-0.0',
  '{"a":1}',
  '[1]',
  'true',
];
const METHODS = [
  'getSlot',
  'getBalance',
  'eth_blockNumber',
  'eth_call',
  'noSuchMethod',
  'getBlock',
];

/** A request object as text: an odd id or none, a known or random method, random params. */
const requestObject = fc
  .record({
    method: fc.oneof(fc.constantFrom(...METHODS), methodName),
    id: fc.option(fc.constantFrom(...ODD_IDS), { freq: 3 }),
    params: fc.option(fc.jsonValue({ maxDepth: 2 }), { freq: 2 }),
    spaces: jsonWhitespace,
  })
  .map(({ method, id, params, spaces }) => {
    const pairs: Array<readonly [string, unknown]> = [
      ['jsonrpc', '2.0'],
      ['method', method],
    ];
    if (id !== null) pairs.push(['id', new RawJson(id)]);
    if (params !== null) pairs.push(['params', params]);
    return serialiseJson(new JsonMembers(pairs), cycle(spaces));
  });

/** A batch member: a request, a notification, or something that is not a request at all. */
const batchMember = fc.oneof(
  { weight: 4, arbitrary: requestObject },
  {
    weight: 1,
    arbitrary: fc.constantFrom('1', '"x"', 'null', '[]', '{}', '{"id":1}', '{"method":7,"id":2}'),
  },
);

/** Inserts a byte that can never appear in UTF-8 somewhere inside a string of `text`. */
const notUtf8 = requestObject.chain((text) =>
  fc
    .nat({ max: text.length })
    .map((at) =>
      Buffer.concat([
        Buffer.from(text.slice(0, at)),
        Buffer.from([0xff]),
        Buffer.from(text.slice(at)),
      ]),
    ),
);

type Body = { readonly kind: 'single' | 'batch' | 'bytes'; readonly bytes: Buffer };

const body: fc.Arbitrary<Body> = fc.oneof(
  requestBodyText.map((text) => ({ kind: 'single' as const, bytes: Buffer.from(text) })),
  requestObject.map((text) => ({ kind: 'single' as const, bytes: Buffer.from(text) })),
  fc
    .array(batchMember, { minLength: 1, maxLength: 6 })
    .map((members) => ({ kind: 'batch' as const, bytes: Buffer.from(`[${members.join(',')}]`) })),
  notUtf8.map((bytes) => ({ kind: 'bytes' as const, bytes })),
);

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness([
    { name: 'a', tier: 0 },
    { name: 'b', tier: 0 },
    { name: 'c', tier: 1 },
  ]);
});
afterAll(async () => {
  await harness.close();
});

function upstreamRequests(): number {
  return Object.values(harness.mocks).reduce((sum, mock) => sum + mock.stats().requests, 0);
}

describe('no request can take nodes down', () => {
  it('random bodies never penalize a node, never get 502/504, never dial needlessly', async () => {
    await fc.assert(
      fc.asyncProperty(body, async ({ kind, bytes }) => {
        const before = upstreamRequests();
        const response = await fetch(harness.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: bytes,
        });
        const text = await response.text();
        const dialed = upstreamRequests() - before;
        expect(response.status, text).not.toBe(502);
        expect(response.status, text).not.toBe(504);
        // A single request needs one node; an unknown error a second opinion; a batch at
        // most one sub-batch per node; bytes that are not JSON none at all.
        const most = kind === 'single' ? 2 : kind === 'batch' ? 3 : 0;
        expect(dialed).toBeLessThanOrEqual(most);
        const health = await harness.health();
        expect(health.nodes.filter((n) => n.status === 'down')).toEqual([]);
      }),
      { seed: 20261203, numRuns: 300 },
    );
    const metrics = await harness.metrics();
    for (const outcome of ['invalid_json', 'body_error', 'transport_error']) {
      expect(metrics).not.toMatch(new RegExp(`outcome="${outcome}"\\} [1-9]`));
    }
  });
});
