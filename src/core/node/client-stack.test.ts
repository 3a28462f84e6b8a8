import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientStack } from './client-stack.js';

const OPTIONS = { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 };

/** A real upstream that counts connections and can hold answers until released. */
async function upstream(hold = false) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const held: ServerResponse[] = [];
  const paths: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      if (hold) held.push(res);
      else res.end(req.url);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    get open() {
      return sockets.size;
    },
    held,
    paths,
    release(): void {
      for (const res of held.splice(0)) res.end('released');
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One request through the stack: its answer body, or its error. */
function send(stack: ClientStack, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const handler: Dispatcher.DispatchHandler = {
      onConnect: () => undefined,
      onHeaders: () => true,
      onData: (chunk: Buffer) => {
        chunks.push(chunk);
        return true;
      },
      onComplete: () => resolve(Buffer.concat(chunks).toString()),
      onError: reject,
    };
    stack.dispatch({ origin: undefined, path, method: 'GET' }, handler);
  });
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('ClientStack', () => {
  it('reuses one connection for requests one after another', async () => {
    const up = await upstream();
    stops.push(up.close);
    const stack = new ClientStack(up.origin, OPTIONS, 10);
    stops.push(() => stack.destroy());
    for (let i = 0; i < 5; i++) {
      expect(await send(stack, `/${i}`)).toBe(`/${i}`);
      // As between a client's calls: the connection drains (undici checks an idle socket
      // for a close from the server for one turn of the event loop before reusing it).
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(up.connections).toBe(1);
    expect(stack.size).toBe(1);
  });

  it('opens at most `max` connections; the rest wait in order and are all answered', async () => {
    const up = await upstream(true);
    stops.push(up.close);
    const stack = new ClientStack(up.origin, OPTIONS, 2);
    stops.push(() => stack.destroy());
    const answers = Array.from({ length: 5 }, (_, i) => send(stack, `/${i}`));
    await expect.poll(() => up.held.length).toBe(2);
    expect(stack.size).toBe(2);
    // Each release answers what the upstream holds; waiting requests take the drained clients.
    const all = Promise.all(answers);
    let done = false;
    void all.then(() => (done = true));
    await expect.poll(() => (up.release(), done)).toBe(true);
    expect(await all).toEqual(Array(5).fill('released'));
    expect(up.connections).toBe(2);
  });

  it('close lets in-flight and waiting requests finish, then closes the connections', async () => {
    const up = await upstream(true);
    stops.push(up.close);
    const stack = new ClientStack(up.origin, OPTIONS, 1);
    const sent = ['/a', '/b', '/c'].map((path) => send(stack, path));
    await expect.poll(() => up.held.length).toBe(1);
    const closed = stack.close();
    for (let answered = 1; answered < 3; answered++) {
      up.release();
      await expect.poll(() => up.held.length).toBe(1);
    }
    up.release();
    await closed;
    expect(await Promise.all(sent)).toEqual(['released', 'released', 'released']);
    // One connection: those that waited went out in the order they came.
    expect(up.paths).toEqual(['/a', '/b', '/c']);
    await expect.poll(() => up.open).toBe(0);
    await expect(send(stack, '/late')).rejects.toThrow(/closed/i);
  });

  it('destroy fails requests in flight and waiting', async () => {
    const up = await upstream(true);
    stops.push(up.close);
    const stack = new ClientStack(up.origin, OPTIONS, 1);
    const outcome = (sent: Promise<string>) => sent.then(String, (err: Error) => err);
    const inFlight = outcome(send(stack, '/a'));
    const waiting = outcome(send(stack, '/b'));
    await expect.poll(() => up.held.length).toBe(1);
    await stack.destroy();
    expect(await inFlight).toBeInstanceOf(Error);
    expect(String(await waiting)).toMatch(/destroyed/i);
  });

  it('drops a client whose connection failed and opens a new one for the next request', async () => {
    const up = await upstream();
    const origin = up.origin;
    await up.close();
    const stack = new ClientStack(origin, OPTIONS, 1);
    stops.push(() => stack.destroy());
    await expect(send(stack, '/a')).rejects.toThrow(/ECONNREFUSED/);
    expect(stack.size).toBe(0);
    await expect(send(stack, '/b')).rejects.toThrow(/ECONNREFUSED/);
    expect(stack.size).toBe(0);
  });
});
