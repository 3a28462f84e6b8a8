/**
 * The primary's loopback metrics listener (`--workers`, `server.metrics_port`): the workers'
 * counters summed with the primary's gauges, and the status page when it is offered there.
 * (One serving process answers on its own proxy's metrics port, core/http/server.ts.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listen } from './http/listen.js';
import { sendBytes, sendStatus } from './http/respond.js';

/** What the listener serves. */
export interface MetricsPortOptions {
  readonly port: number;
  /** The exposition text. */
  render(): Promise<string>;
  readonly contentType: string;
  /** Other pages (the status page); true when it answered. */
  pages(req: IncomingMessage, res: ServerResponse, path: string): boolean;
}

/** Listens on 127.0.0.1:`port`; close it with `closeAllConnections()` then `close()`. */
export async function startMetricsPort(options: MetricsPortOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path !== '/metrics') {
      if (!options.pages(req, res, path)) sendStatus(res, 404, 'Not Found');
      return;
    }
    options.render().then(
      (text) => sendBytes(res, 200, options.contentType, text),
      () => sendStatus(res, 500, 'metrics unavailable'),
    );
  });
  await listen(server, '127.0.0.1', options.port, 'metrics');
  return server;
}
