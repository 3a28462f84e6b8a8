/**
 * The proxy's monitoring surface: what /metrics reads (its live sources), how /health and
 * /metrics are answered, and the loopback listener `[server] metrics_port` opens for them.
 * Neither route is on the proxy path: server.ts calls these only for their own paths.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ClientKeys } from '../keys/client-keys.js';
import type { ProxyMetrics } from '../metrics.js';
import type { Topology } from '../routing/topology.js';
import type { CorsPolicy } from './cors.js';
import type { HealthReport } from './health.js';
import { listen } from './listen.js';
import { sendBytes, sendJson, sendStatus } from './respond.js';
import { chainSamples, quotaSamples, topologySample } from './server-samples.js';
import type { ProxyServerOptions } from './server-options.js';
import { pathOf } from './url-path.js';

/** Where /health and /metrics come from in a worker of several (undefined: this process). */
type FleetView = ProxyServerOptions['fleetView'];

/** Points the scrape-time gauges (quota, chain, topology, logs, keys) at the live topology. */
export function setMetricSources(
  metrics: ProxyMetrics,
  topology: Topology,
  clock: Clock,
  keys: ClientKeys,
): void {
  metrics.setQuotaSource(() => quotaSamples(topology.table.all, new Date()));
  metrics.setChainSource?.(() => chainSamples(topology, clock.now()));
  metrics.setTopologySource?.(() => topologySample(topology));
  metrics.setLogsSource?.(() =>
    topology.table.all.map((node) => ({ node: node.name, ...node.logsLimits })),
  );
  if (keys.enabled) metrics.setKeySource?.(() => keys.samples());
}

/**
 * GET /health: the fleet's report in a worker of several (this process's when the fleet cannot
 * answer), else this process's. Browsers may call it, so `cors` decorates and preflights it.
 */
export function serveHealth(
  req: IncomingMessage,
  res: ServerResponse,
  cors: CorsPolicy | undefined,
  fleet: FleetView,
  local: { health(): HealthReport },
): void {
  const allowed = cors !== undefined && cors.decorate(req, res);
  if (cors && req.method === 'OPTIONS') return cors.preflight(req, res, allowed, 'GET');
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendStatus(res, 405, 'Method Not Allowed', 'GET');
  if (fleet === undefined) return sendJson(res, 200, local.health());
  fleet.health().then(
    (report) => sendJson(res, 200, report),
    () => sendJson(res, 200, local.health()),
  );
}

/** GET /metrics: the fleet's sum in a worker of several, else this process's registry. */
export function serveMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  metrics: ProxyMetrics,
  fleet: FleetView,
  logger: Logger,
): void {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return sendStatus(res, 405, 'Method Not Allowed', 'GET');
  const render = fleet?.metrics() ?? metrics.render();
  render.then(
    (text) => sendBytes(res, 200, metrics.contentType, text),
    (err: unknown) => {
      logger.error({ err }, 'metrics rendering failed');
      sendStatus(res, 500, 'metrics unavailable');
    },
  );
}

/**
 * The loopback listener of `[server] metrics_port`: /metrics, the routes `metricsRoutes` adds
 * (the status page), 404 for the rest. While it is open, /metrics leaves the proxy's listener.
 */
export class MetricsListener {
  readonly #server: Server;
  #port: number | undefined;

  constructor(options: ProxyServerOptions, metrics: ProxyMetrics) {
    this.#server = createServer((req, res) => {
      const path = pathOf(req.url);
      if (path === '/metrics')
        return serveMetrics(req, res, metrics, options.fleetView, options.logger);
      if (options.metricsRoutes?.(req, res, path)) return;
      sendStatus(res, 404, 'Not Found');
    });
  }

  /** Binds 127.0.0.1:`port`; rejects with a StartupError when it cannot. */
  async listen(port: number): Promise<void> {
    this.#port = await listen(this.#server, '127.0.0.1', port, 'metrics');
  }

  /** The bound port (undefined until `listen` succeeds). */
  get port(): number | undefined {
    return this.#port;
  }

  /** Closes it, scrapes in progress included (nothing there is worth draining). */
  async close(): Promise<void> {
    const server = this.#server;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
