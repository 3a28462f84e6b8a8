import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (bound, then released). Also how tests
 * make a "dead node": nothing listens there any more.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
