/** What a ProxyServer is started with (server.ts). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/types.js';
import type { ProxyMetrics } from '../metrics.js';
import type { MethodRegistry } from '../protocol/method-registry.js';
import type { UsageProvider } from '../routing/topology.js';
import type { HealthReport } from './health.js';

/** How to start a proxy server. */
export interface ProxyServerOptions {
  readonly config: Config;
  readonly registry: MethodRegistry;
  readonly logger: Logger;
  readonly usage: UsageProvider;
  readonly version: string;
  /** Default: prom-client metrics when server.enable_metrics, else none. */
  readonly metrics?: ProxyMetrics;
  readonly clock?: Clock;
  /** Override server.host / server.port (CLI flags). */
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly accessLog?: boolean;
  readonly budgetMs?: number;
  readonly attemptTimeoutMs?: number;
  /** Hears every node penalty (seconds) and recovery (0): workers pass them to the others. */
  readonly onNodeHealth?: (node: string, seconds: number) => void;
  /**
   * Where /health and /metrics come from when this process is one of several workers; the
   * primary then holds `metrics_port` (a worker never binds it).
   */
  readonly fleetView?: {
    health(): Promise<HealthReport>;
    metrics(): Promise<string>;
  };
  /** Routes of the loopback metrics listener besides /metrics (the status page). True when handled. */
  readonly metricsRoutes?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
  /** Extra routes (admin, quota) tried before the 404. Return true when handled. */
  readonly extraRoutes?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean;
}

/** Whether two `[server]` values are equal (lists compare by content). */
export function sameValue(a: unknown, b: unknown): boolean {
  return Array.isArray(a) && Array.isArray(b)
    ? a.length === b.length && a.every((item, i) => item === b[i])
    : a === b;
}
