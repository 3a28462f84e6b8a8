import type { Server } from 'node:http';

/** How often a draining server closes the connections whose answers are out. */
const DRAIN_SWEEP_MS = 25;

/**
 * Stops `server` accepting and waits (up to `drainMs`) for its connections to finish their
 * requests, then closes whatever is left. Resolves with whether requests had to be cut off.
 */
export async function drainServer(server: Server, drainMs: number): Promise<boolean> {
  let closed = false;
  const allClosed = new Promise<void>((resolve) =>
    server.close(() => {
      closed = true;
      resolve();
    }),
  );
  // Node closes only connections with no request in progress; one still answering becomes
  // idle when its answer is out, so sweep until every connection is gone or time is up.
  // (Tracking requests in flight instead would cost a listener on every response.)
  server.closeIdleConnections();
  if (drainMs > 0) {
    const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      allClosed,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, drainMs))),
    ]);
    clearInterval(sweep);
    clearTimeout(timer);
  }
  const cutOff = !closed;
  server.closeAllConnections();
  await allClosed;
  return cutOff;
}
