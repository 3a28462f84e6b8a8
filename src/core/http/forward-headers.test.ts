import fc from 'fast-check';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FORWARDED_HEADERS, forwardHeaders } from './exchange-record.js';

/** A request whose header lines are `raw`, as node's HTTP parser hands them over. */
function requestWith(raw: string[]): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  // What node:http's parser calls with a request's header lines (not in the typings).
  (req as unknown as { _addHeaderLines(lines: string[], n: number): void })._addHeaderLines(
    raw,
    raw.length,
  );
  return req;
}

/** The rule as node states it: the forwarded names' values in `req.headers`. */
function byNode(req: IncomingMessage): Record<string, string> | undefined {
  const picked = Object.entries(req.headers).filter(
    ([name, value]) =>
      (FORWARDED_HEADERS as readonly string[]).includes(name) && typeof value === 'string',
  );
  return picked.length === 0 ? undefined : (Object.fromEntries(picked) as Record<string, string>);
}

describe('forwardHeaders', () => {
  it('passes on tracing and client ids, in lower case, repeats joined as node joins them', () => {
    const req = requestWith([
      'Host',
      'localhost',
      'TraceParent',
      '00-aa-bb-01',
      'X-Request-Id',
      'r1',
      'x-request-id',
      'r2',
      'Solana-Client',
      'js/1.0',
      'Content-Type',
      'application/json',
      'Connection',
      'keep-alive',
      'tracestat',
      'not forwarded',
    ]);
    expect(forwardHeaders(req)).toEqual({
      traceparent: '00-aa-bb-01',
      'x-request-id': 'r1, r2',
      'solana-client': 'js/1.0',
    });
    expect(forwardHeaders(requestWith(['Host', 'h', 'Content-Type', 'x']))).toBeUndefined();
  });

  it('agrees with req.headers on any header lines', () => {
    const name = fc.oneof(
      fc.constantFrom(...FORWARDED_HEADERS, 'Content-Type', 'Connection', 'User-Agent', 'Host'),
      fc.constantFrom(...FORWARDED_HEADERS).map((n) => n.toUpperCase()),
      fc.constantFrom(...FORWARDED_HEADERS).map((n) => `${n[0]!.toUpperCase()}${n.slice(1)}`),
      fc.stringMatching(/^[A-Za-z-]{1,14}$/),
    );
    const line = fc.tuple(name, fc.stringMatching(/^[ -~]{0,12}$/));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 10 }), (lines) => {
        const req = requestWith(lines.flat());
        expect(forwardHeaders(req)).toEqual(byNode(req));
      }),
      { numRuns: 1000 },
    );
  });
});
