/** Load-balancer style keep-alive (idleCloseMs), seen from a raw client socket. */
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockNode, type MockNode, type MockNodeOptions } from './index.js';

let node: MockNode | undefined;
const sockets: Duplex[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await node?.close();
  node = undefined;
});

async function start(options: Omit<MockNodeOptions, 'name'>): Promise<MockNode> {
  node = await startMockNode({ name: 'lb', ...options });
  return node;
}

const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
const REQUEST = `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`;

/** A connected socket that records what arrives and whether the server closed it. */
function connect(target: MockNode, secure = false) {
  const socket = secure
    ? tls.connect({ host: '127.0.0.1', port: target.port, rejectUnauthorized: false })
    : net.connect(target.port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  const listeners = new Set<() => void>();
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk;
    for (const listener of listeners) listener();
  });
  const closedByServer = new Promise<void>((resolve) => socket.once('end', resolve));
  /** Sends one request and resolves with the whole response text (headers and body). */
  const exchange = (text: string) =>
    new Promise<string>((resolve) => {
      received = '';
      const check = () => {
        const split = received.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(received)?.[1];
        if (split === -1 || length === undefined) return;
        if (received.length < split + 4 + Number(length)) return;
        listeners.delete(check);
        resolve(received);
      };
      listeners.add(check);
      socket.write(text);
    });
  return { socket, exchange, closedByServer };
}

const headerNames = (response: string) =>
  response
    .slice(0, response.indexOf('\r\n\r\n'))
    .split('\r\n')
    .slice(1)
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());

describe('idleCloseMs', () => {
  it('sends no Keep-Alive hint and closes a connection idle past the bound', async () => {
    const target = await start({ idleCloseMs: 200 });
    const client = connect(target);
    const first = await client.exchange(REQUEST);
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(first).toMatch(/\r\nConnection: keep-alive\r\n/i);
    expect(headerNames(first)).not.toContain('keep-alive');
    // The server ends the connection on its own: the client never sends anything else.
    await client.closedByServer;
    expect(target.stats()).toMatchObject({ connections: 1, requests: 1 });
  });

  it('never closes a connection while a request is in flight on it', async () => {
    const target = await start({ idleCloseMs: 50, delayMs: 300 });
    const client = connect(target);
    const answer = await client.exchange(REQUEST);
    expect(answer.endsWith('{"jsonrpc":"2.0","result":"ok","id":1}')).toBe(true);
    await client.closedByServer;
  });

  it('works on https too', async () => {
    const target = await start({ idleCloseMs: 200, tls: true });
    const client = connect(target, true);
    const answer = await client.exchange(REQUEST);
    expect(headerNames(answer)).not.toContain('keep-alive');
    await client.closedByServer;
  });

  it('without it, answers announce the 65 s keep-alive as Node does by default', async () => {
    const target = await start({});
    const answer = await connect(target).exchange(REQUEST);
    expect(answer).toMatch(/\r\nKeep-Alive: timeout=65\r\n/);
  });

  it('rejects a bound that is not a positive integer', async () => {
    await expect(startMockNode({ name: 'bad', idleCloseMs: 0 })).rejects.toThrow(
      /idleCloseMs = 0; expected an integer > 0/,
    );
  });
});
