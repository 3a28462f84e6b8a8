/**
 * A TCP relay a test puts between cascade and a service (Redis) to cut the wire: `blackhole`
 * keeps connections open but passes no byte either way (as a dead network path does), and new
 * connections hang too; `restore` drops the hung connections so clients reconnect through.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running relay. */
export interface TcpProxy {
  readonly port: number;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

/** Relays 127.0.0.1:<port> to 127.0.0.1:`target`. */
export async function startTcpProxy(target: number): Promise<TcpProxy> {
  let dark = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (dark) return client.pause();
    const upstream = connect(target, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('data', (chunk) => {
      if (!dark) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!dark) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    blackhole: () => {
      dark = true;
    },
    restore: () => {
      dark = false;
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
