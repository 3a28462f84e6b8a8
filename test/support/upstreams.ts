/**
 * Hand-written upstreams for answers the mock nodes don't give, and pointing a harness node
 * at one. Every upstream started here is closed by `closeUpstreams` (call it in afterEach).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Harness } from './proxy-harness.js';

const running: Server[] = [];

/** Starts an upstream on 127.0.0.1 and resolves with its URL. */
export async function startUpstream(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  running.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** Closes every upstream started so far, stalled connections included. */
export async function closeUpstreams(): Promise<void> {
  for (const server of running.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Reloads the harness with node `name` sent to `url` instead of its mock. */
export function pointAt(h: Harness, name: string, url: string): void {
  h.server.reload({
    ...h.server.config,
    nodes: h.server.nodes().map((n) => (n.name === name ? { ...n, url, redactedUrl: url } : n)),
  });
}
