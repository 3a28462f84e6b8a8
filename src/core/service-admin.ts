/**
 * The admin surface of a service (one cascade, or the primary of `--workers`): the admin
 * listener when `server.admin_port` is set — usage, resets and the operator's routes (node
 * rows, cordons, reload, the status page) — and whether the status page is on the metrics port.
 */
import type { Logger } from 'pino';
import { handleOperatorRoute } from './admin/admin-routes.js';
import { handleKeyRoute, type KeyAdmin } from './admin/key-routes.js';
import type { Operator } from './admin/operator.js';
import type { RedisCoordinator } from './cluster/redis-coordinator.js';
import type { AccountConfig, ServerConfig } from './config/types.js';
import { startAdminServer, type AdminServer } from './http/admin-server.js';
import { hostPort } from './http/listen.js';
import { accountQuotaReport, quotaReport, type UsageReading } from './quota/quota-report.js';
import type { NodeList, UsageStore } from './service-usage.js';

/** What the admin surface shows and acts on. */
export interface AdminSurfaceOptions {
  /** `[server]` as started: admin_port, admin_host, the token. */
  readonly server: ServerConfig;
  readonly nodes: NodeList;
  /** The provider accounts in force (`[[accounts]]`); absent: none. */
  readonly accounts?: () => readonly AccountConfig[];
  readonly usage: UsageStore;
  /** With replicas, resets go to the fleet's usage in Redis. */
  readonly coordinator: RedisCoordinator | undefined;
  /** Node rows, cordons and reload; undefined: those routes are not offered. */
  readonly operator: Operator | undefined;
  /** The client keys this process answers for (the primary's: with its workers); undefined: none. */
  readonly keys?: KeyAdmin | undefined;
  readonly logger: Logger;
}

/** The status page is on the loopback metrics port too, unless the admin data needs a token. */
export function statusOnMetricsPort(server: ServerConfig): boolean {
  return (
    server.enableMetrics && server.metricsPort !== undefined && server.adminToken === undefined
  );
}

/** Whether the service needs an operator (an admin listener, or the status page elsewhere). */
export function wantsOperator(server: ServerConfig): boolean {
  return server.adminPort !== undefined || statusOnMetricsPort(server);
}

/** Writes quotas.json now (a key's usage changed through the admin API). */
async function saveKeys(usage: UsageStore): Promise<void> {
  const { error } = await usage.flusher.tick();
  if (error) throw error;
}

/** Starts the admin listener when `admin_port` is set, and logs where it is. */
export async function startAdminSurface(
  options: AdminSurfaceOptions,
): Promise<AdminServer | undefined> {
  const { server, nodes, usage, coordinator, operator, logger, keys } = options;
  if (server.adminPort === undefined) return undefined;
  const { ledger, flusher } = usage;
  const token = server.adminToken;
  const reading = (name: string): UsageReading => {
    const counter = ledger.counter(name);
    return { used: counter.used, periodStart: ledger.periodStart(name), saved: counter.saved };
  };
  const report = () => quotaReport(nodes(), reading, new Date());
  const accounts = options.accounts;
  const admin = await startAdminServer(
    server.adminPort,
    {
      report,
      nodeNames: () => nodes().map((node) => node.name),
      accounts: () => accountQuotaReport(accounts?.() ?? [], nodes(), reading, new Date()),
      async reset(names) {
        // With replicas, the fleet's usage is reset in Redis; each replica sees it next sync.
        await coordinator?.reset(names);
        for (const name of names) ledger.reset(name);
        const { error } = await flusher.tick();
        if (error) throw error;
        return report();
      },
      routes: (req, res, path) =>
        (keys !== undefined &&
          handleKeyRoute(req, res, path, keys, () => saveKeys(usage), logger)) ||
        (operator !== undefined &&
          handleOperatorRoute(req, res, path, operator, logger, token !== undefined)),
    },
    logger,
    { host: server.adminHost, token },
  );
  const host = server.adminHost;
  const base = `http://${hostPort(host, admin.port)}`;
  logger.info(
    { url: `${base}/admin/nodes`, status_page: `${base}/status`, token: token !== undefined },
    token === undefined
      ? 'admin listener (loopback only)'
      : 'admin listener (bearer token required)',
  );
  return admin;
}
