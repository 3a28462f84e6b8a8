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

/** A free port whose port + 1 is free too (the proxy's, and the one web3.js derives). */
export async function freePortPair(): Promise<number> {
  for (;;) {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    const next = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      next.once('error', () => resolve(false));
      next.listen(port + 1, '127.0.0.1', () => resolve(true));
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    if (ok) await new Promise<void>((resolve) => next.close(() => resolve()));
    if (ok) return port;
  }
}
