import type { Logger } from 'pino';
import {
  formatProblem,
  loadConfig,
  type MethodRegistry,
  type ProxyServer,
  type QuotaFlusher,
  type ServerConfig,
} from '../core/index.js';
import type { CommandIo } from './io.js';

const SERVER_KEY: Record<keyof ServerConfig, string> = {
  host: 'host',
  port: 'port',
  enableMetrics: 'enable_metrics',
  maxBodyBytes: 'max_body_bytes',
  quotasPath: 'quotas_path',
  maxBatchSize: 'max_batch_size',
  metricsPort: 'metrics_port',
  adminPort: 'admin_port',
  quotaFlushSeconds: 'quota_flush_seconds',
  requestTimeoutMs: 'request_timeout_ms',
  attemptTimeoutMs: 'attempt_timeout_ms',
};

/** What a SIGHUP reload needs. */
export interface ReloadContext {
  readonly server: ProxyServer;
  readonly flusher: QuotaFlusher;
  readonly registry: MethodRegistry;
  readonly logger: Logger;
  readonly io: CommandIo;
  readonly configPath: string | undefined;
}

/**
 * Re-reads the config and every price list, all or nothing. A failure is one error line and
 * the running node set stays; a success is one line saying what changed.
 */
export function reloadConfig(ctx: ReloadContext): void {
  const { logger } = ctx;
  const result = loadConfig({
    configPath: ctx.configPath,
    env: ctx.io.env,
    cwd: ctx.io.cwd,
    registry: ctx.registry,
  });
  if (!result.config) {
    const why = result.errors.map(formatProblem).join('; ');
    logger.error(
      { problems: result.errors.length },
      `config reload failed; keeping the running config: ${why}`,
    );
    return;
  }
  for (const warning of result.warnings) logger.warn(`config: ${formatProblem(warning)}`);
  const { diff, serverChanged } = ctx.server.reload(result.config);
  const change = ctx.flusher.applyNodeSet(ctx.server.nodes());
  for (const retired of change.retired) {
    logger.info(
      { node: retired.name, used: retired.used },
      'node removed; its usage leaves quotas.json at the next write',
    );
  }
  if (serverChanged.length > 0) {
    const keys = serverChanged.map(
      (key) => `server.${SERVER_KEY[key as keyof ServerConfig] ?? key}`,
    );
    logger.warn({ fields: keys }, `${keys.join(', ')} changed: needs restart; ignored until then`);
  }
  const details = diff.changed.length > 0 ? ` (${diff.changed.join('; ')})` : '';
  logger.info(
    { added: diff.added, removed: diff.removed, changed: diff.changed },
    `config reloaded: +${diff.added.length} -${diff.removed.length} ~${diff.changed.length}${details}`,
  );
}
