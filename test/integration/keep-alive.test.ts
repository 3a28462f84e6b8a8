/**
 * Behind a load balancer: the balancer keeps idle connections to cascade open for its own
 * idle timeout (AWS ALB 60 s) and reuses them. If cascade closed one first, the balancer's
 * next request on it fails and its client gets a 502. Here a balancer-style client (one raw
 * socket, reused after an idle gap) checks that `keep_alive_timeout_ms` is what decides.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listenerOptions } from '../../src/core/http/listener-options.js';
import { startHarness, type Harness } from '../support/proxy-harness.js';

/** Node's default, which cascade used to hard-code. */
const OLD_KEEP_ALIVE_MS = 5000;
/** Node 20 keeps a socket up to a second past the timeout it announces; wait past both. */
const PAST_THE_OLD_EDGE_MS = OLD_KEEP_ALIVE_MS + 1500;

let harness: Harness | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await harness?.close();
  harness = undefined;
});

/** One persistent connection, as a balancer keeps to each target. */
class BalancerConnection {
  readonly socket: Socket;
  closed = false;
  #buffer = Buffer.alloc(0);
  #waiter: (() => void) | undefined;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect(Number(port), hostname);
    sockets.push(this.socket);
    this.socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#waiter?.();
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      this.#waiter?.();
    });
  }

  /** Sends one request on the connection; resolves with the answer, or null if it was closed. */
  async request(): Promise<{ status: number; headers: string; body: string } | null> {
    if (this.closed) return null;
    const body = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
    this.socket.write(
      `POST / HTTP/1.1\r\nHost: cascade\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n${body}`,
    );
    for (;;) {
      const answer = this.#take();
      if (answer) return answer;
      if (this.closed) return null;
      await new Promise<void>((resolve) => (this.#waiter = resolve));
    }
  }

  /** A complete answer from the buffer, if one has arrived. */
  #take(): { status: number; headers: string; body: string } | undefined {
    const end = this.#buffer.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const headers = this.#buffer.subarray(0, end).toString('latin1');
    const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0);
    if (this.#buffer.length < end + 4 + length) return undefined;
    const body = this.#buffer.subarray(end + 4, end + 4 + length).toString();
    this.#buffer = this.#buffer.subarray(end + 4 + length);
    return { status: Number(headers.split(' ')[1]), headers, body };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a balancer reusing an idle connection', () => {
  it(
    'is answered after the old 5 s edge when keep_alive_timeout_ms is longer',
    async () => {
      harness = await startHarness([{ name: 'n' }], { server: { keepAliveTimeoutMs: 20_000 } });
      const connection = new BalancerConnection(harness.url);
      const first = await connection.request();
      expect(first?.status).toBe(200);
      expect(first?.headers).toMatch(/keep-alive: timeout=20\r?$/im);
      await sleep(PAST_THE_OLD_EDGE_MS);
      expect(connection.closed).toBe(false);
      const second = await connection.request();
      expect(second?.status).toBe(200);
      expect(JSON.parse(second!.body)).toMatchObject({ result: expect.any(Number) as unknown });
    },
    PAST_THE_OLD_EDGE_MS + 15_000,
  );

  it('finds the connection closed once it has been idle past the configured timeout', async () => {
    harness = await startHarness([{ name: 'n' }], { server: { keepAliveTimeoutMs: 1000 } });
    const connection = new BalancerConnection(harness.url);
    const first = await connection.request();
    expect(first?.headers).toMatch(/keep-alive: timeout=1\r?$/im);
    // Closed by cascade, not by us: this is the close a balancer must never be surprised by.
    await expect.poll(() => connection.closed, { interval: 100 }).toBe(true);
  });
});

describe('listenerOptions', () => {
  it.each([1000, 5000, 65_000, 620_000])(
    'keeps the headers timeout above a keep-alive of %i ms',
    (keepAlive) => {
      const options = listenerOptions(keepAlive);
      expect(options.keepAliveTimeout).toBe(keepAlive);
      expect(options.headersTimeout).toBeGreaterThan(keepAlive);
      expect(options.requestTimeout).toBeGreaterThanOrEqual(options.headersTimeout!);
    },
  );

  it('keeps Node’s usual timeouts for the default keep-alive', () => {
    expect(listenerOptions(5000)).toEqual({
      keepAliveTimeout: 5000,
      headersTimeout: 10_000,
      requestTimeout: 30_000,
    });
  });
});
