/** The WebSocket side of a serving process (one cascade, or one worker). */
import type { Logger } from 'pino';
import { hostPort } from './http/listen.js';
import type { ProxyServer } from './http/server.js';
import type { MethodRegistry } from './protocol/method-registry.js';
import type { WsTuning } from './ws/gateway-context.js';
import { WsGateway } from './ws/ws-gateway.js';

/** Starts the WebSocket side on the proxy's listener (and `ws_port`), fed to /metrics. */
export async function startWs(
  server: ProxyServer,
  options: {
    readonly registry: MethodRegistry;
    readonly logger: Logger;
    readonly host?: string | undefined;
    readonly wsTuning?: Partial<WsTuning> | undefined;
  },
): Promise<WsGateway> {
  const { listener, chains, counts, keys, trustedProxies } = server.upgradeTarget;
  const ws = await WsGateway.start({
    listener,
    chains,
    counts,
    keys,
    trustedProxies,
    registry: options.registry,
    logger: options.logger,
    server: server.config.server,
    host: options.host ?? server.config.server.host,
    tuning: options.wsTuning,
  });
  server.metrics.setWsSource?.(() => ws.snapshot());
  return ws;
}

/** The WebSocket URLs a startup line names: the main port, and `ws_port` when open. */
export function wsUrls(host: string, port: number, wsPort: number | undefined): string[] {
  return [
    `ws://${hostPort(host, port)}`,
    ...(wsPort === undefined ? [] : [`ws://${hostPort(host, wsPort)}`]),
  ];
}
