/**
 * `cascade serve --workers N`: the primary forks N workers that share the listening port, and
 * owns the config, quotas.json, the lock and the admin listener; each worker serves with the
 * config the primary hands it (core/service-*.ts).
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import {
  runCascadeWorker,
  startCascadePrimary,
  type Config,
  type MethodRegistry,
} from '../core/index.js';
import type { ExitCode } from './io.js';
import type { ServeContext, ServeOptions } from './serve-options.js';
import { packageVersion } from './version.js';

/** Runs the primary until SIGINT/SIGTERM, then drains the workers and writes usage. */
export async function runPrimary(
  config: Config,
  options: ServeOptions,
  ctx: ServeContext & { readonly workers: number },
): Promise<ExitCode> {
  const { log, signals } = ctx;
  const primary = await startCascadePrimary({
    config,
    logger: log,
    workers: ctx.workers,
    quotasPath: ctx.quotasPath,
    reloadSource: ctx.reloadSource,
    host: options.host,
    port: options.port,
  });
  signals.serving(primary);
  const end = await Promise.race([
    signals.stopped.then((signal) => ({ signal })),
    primary.failed.then((failure) => ({ failure })),
  ]);
  if ('failure' in end) {
    // The worker printed the error and its hint; the primary says why everything stops.
    log.error({ err: end.failure.message }, 'a worker could not start serving: stopping');
    const summary = await primary.close();
    log.info({ usage: summary.usage }, 'cascade stopped');
    return summary.code === 0 ? 1 : summary.code;
  }
  log.info({ signal: end.signal }, 'shutting down: draining the workers');
  const summary = await primary.close();
  log.info({ usage: summary.usage }, 'cascade stopped');
  return summary.code;
}

/**
 * Runs this process as one worker until the primary says to stop. It reads no config: the
 * primary hands over the one it checked (the demo's mock node URLs included).
 */
export async function runWorker(
  options: ServeOptions,
  ctx: { readonly registry: MethodRegistry; readonly log: Logger },
): Promise<ExitCode> {
  await runCascadeWorker({
    registry: ctx.registry,
    logger: ctx.log.child({ worker: cluster.worker?.id }),
    version: packageVersion(),
    host: options.host,
    port: options.port,
    accessLog: options.accessLog,
  });
  return 0;
}
