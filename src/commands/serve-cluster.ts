import cluster from 'node:cluster';
/**
 * `cascade serve --workers N`: the primary forks N workers that share the listening port, and
 * owns quotas.json, the lock and the admin listener; each worker serves (core/service-*.ts).
 */
import type { Logger } from 'pino';
import {
  runCascadeWorker,
  startCascadePrimary,
  type Config,
  type LoadResult,
  type MethodRegistry,
} from '../core/index.js';
import type { ExitCode } from './io.js';
import type { ServeOptions, handleSignals } from './serve.js';
import { packageVersion } from './version.js';

/** The demo's mock nodes live in the primary; workers get their URLs from here. */
const DEMO_URLS = 'CASCADE_DEMO_NODE_URLS';

/** Runs the primary until SIGINT/SIGTERM, then drains the workers and writes usage. */
export async function runPrimary(
  config: Config,
  options: ServeOptions,
  ctx: {
    readonly workers: number;
    readonly quotasPath: string;
    readonly log: Logger;
    readonly reloadSource: (() => LoadResult) | undefined;
    readonly signals: ReturnType<typeof handleSignals>;
  },
): Promise<ExitCode> {
  const { log, signals } = ctx;
  const primary = await startCascadePrimary({
    config,
    logger: log,
    workers: ctx.workers,
    quotasPath: ctx.quotasPath,
    reloadSource: ctx.reloadSource,
    port: options.port,
    workerEnv: options.demo
      ? { [DEMO_URLS]: JSON.stringify(config.nodes.map((n) => n.url)) }
      : undefined,
  });
  signals.serving(primary);
  log.info({ signal: await signals.stopped }, 'shutting down: draining the workers');
  const summary = await primary.close();
  log.info({ usage: summary.usage }, 'cascade stopped');
  return summary.code;
}

/** Runs this process as one worker until the primary says to stop. */
export async function runWorker(
  config: Config,
  options: ServeOptions,
  ctx: {
    readonly registry: MethodRegistry;
    readonly log: Logger;
    readonly reloadSource: (() => LoadResult) | undefined;
  },
): Promise<ExitCode> {
  const urls = process.env[DEMO_URLS];
  const demoUrls = urls === undefined ? undefined : (JSON.parse(urls) as string[]);
  const nodes = demoUrls
    ? config.nodes.map((n, i) => ({ ...n, url: demoUrls[i]!, redactedUrl: demoUrls[i]! }))
    : config.nodes;
  await runCascadeWorker({
    config: { ...config, nodes },
    registry: ctx.registry,
    logger: ctx.log.child({ worker: cluster.worker?.id }),
    version: packageVersion(),
    reloadSource: ctx.reloadSource,
    host: options.host,
    port: options.port,
    accessLog: options.accessLog,
  });
  return 0;
}
