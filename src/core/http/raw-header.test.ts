import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawHeader } from './raw-header.js';

/** Sends raw header lines to a real server and hands back what it parsed. */
let seen: (req: IncomingMessage) => void = () => undefined;
const server = createServer((req, res) => {
  seen(req);
  res.end();
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The request a real server parsed from these header lines (sent as written). */
function received(headers: [string, string][]): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    seen = resolve;
    const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const socket = connect(port, '127.0.0.1', () => {
      socket.end(`GET / HTTP/1.1\r\n${lines}Connection: close\r\n\r\n`);
    });
    socket.on('error', reject);
    socket.resume();
  });
}

describe('rawHeader', () => {
  it('reads every name as req.headers does: any case, repeats joined, host and length once', async () => {
    const req = await received([
      ['Host', 'cascade.example'],
      ['X-Request-Id', 'a'],
      ['traceparent', '00-1'],
      ['x-request-ID', 'b'],
      ['Solana-Client', 'js/1.0'],
      ['X-Forwarded-For', '10.0.0.1'],
    ]);
    const names = [
      'x-request-id',
      'traceparent',
      'tracestate',
      'solana-client',
      'host',
      'x-forwarded-for',
      'accept-encoding',
    ];
    for (const name of names) {
      const expected = req.headers[name];
      expect(rawHeader(req, name)).toBe(typeof expected === 'string' ? expected : undefined);
    }
    expect(rawHeader(req, 'x-request-id')).toBe('a, b');
  });

  it('keeps the first host and content-length, as Node does', async () => {
    const req = await received([
      ['Host', 'one.example'],
      ['host', 'two.example'],
    ]);
    expect(rawHeader(req, 'host')).toBe(req.headers.host);
    expect(rawHeader(req, 'host')).toBe('one.example');
  });
});
