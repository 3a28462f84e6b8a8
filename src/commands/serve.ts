/** `cascade serve`: flags, config and logging; startCascade (core/service.ts) does the rest. */
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import {
  MethodRegistry,
  exposureWarning,
  isLoopback,
  loadConfig,
  loadDotEnv,
  startCascade,
  type Config,
} from '../core/index.js';
import type { MockNode } from '../mock/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { DEMO_CONFIG, configSource, loadOrFail } from './load-or-fail.js';
import { createLogger } from './logger.js';
import { runPrimary, runWorker } from './serve-cluster.js';
import type { ServeContext, ServeOptions } from './serve-options.js';
import { handleSignals } from './serve-signals.js';
import { packageVersion } from './version.js';

export type { ServeOptions } from './serve-options.js';

/** `cascade serve`: run the proxy until SIGINT/SIGTERM; reload on SIGHUP. */
export async function runServe(options: ServeOptions, io: CommandIo): Promise<ExitCode> {
  loadDotEnv(io.cwd, io.env);
  const log = createLogger(io.env);
  const registry = new MethodRegistry();
  // A worker is handed the config its primary checked: it never reads the file.
  if (cluster.isWorker) return runWorker(options, { registry, log });
  const shipped = options.demo === true ? DEMO_CONFIG : undefined;
  const source = { ...configSource(options.config, io, shipped), registry };
  const loaded = loadOrFail(source, io, 'nothing was started', (l) => log.warn(`config: ${l}`));
  const config = withFlags(loaded, options);
  warnIfHostFlagExposes(config, options.host, log);
  const reloadSource = options.demo ? undefined : () => reloadWithFlags(source, options);
  const workers = workerCount(options.workers ?? config.cluster?.workers ?? 1);
  let running = config;
  let mocks: MockNode[] = [];
  if (options.demo) {
    // Loaded only for the demo: the mock nodes' code would otherwise sit in every serving
    // process (some 7 MB of memory).
    const { withDemoNodes } = await import('./demo-nodes.js');
    ({ config: running, mocks } = await withDemoNodes(config));
  }
  const quotasPath = path.resolve(io.cwd, options.quotas ?? config.server.quotasPath);
  const signals = handleSignals(log);
  const ctx: ServeContext = { quotasPath, log, reloadSource, signals };
  try {
    if (workers > 1) return await runPrimary(running, options, { ...ctx, workers });
    return await serveHere(running, options, { ...ctx, registry });
  } finally {
    await Promise.all(mocks.map((mock) => mock.close()));
  }
}

/** `--host` may expose a listener the file kept on loopback: the same warning as the file's. */
function warnIfHostFlagExposes(config: Config, host: string | undefined, log: Logger): void {
  if (host === undefined || !isLoopback(config.server.host)) return;
  const warning = exposureWarning(host, config.server.requireKey === true);
  if (warning !== undefined) log.warn(`config: --host: ${warning.message} — ${warning.hint}`);
}

/**
 * The flags that override the file (`--admin-port`, and `--port` moving `ws_port`), applied
 * alike at start and on every reload: a flag is not a change that needs a restart.
 */
function withFlags(config: Config, options: ServeOptions): Config {
  const withAdmin =
    options.adminPort === undefined
      ? config
      : { ...config, server: { ...config.server, adminPort: options.adminPort } };
  return withPortFlag(withAdmin, options.port);
}

/**
 * `--port` takes a `ws_port` written as port + 1 along with it (the demo's): port + 1 is where
 * @solana/web3.js looks for the WebSocket of the URL it is given, whatever that port is.
 */
function withPortFlag(config: Config, port: number | undefined): Config {
  const { server } = config;
  if (port === undefined || server.wsPort !== server.port + 1) return config;
  const wsPort = port === 0 ? 0 : port + 1;
  return { ...config, server: { ...server, wsPort, wsPortBestEffort: true } };
}

function reloadWithFlags(source: Parameters<typeof loadConfig>[0], options: ServeOptions) {
  const result = loadConfig(source);
  return result.config ? { ...result, config: withFlags(result.config, options) } : result;
}

function workerCount(value: number | 'auto'): number {
  return value === 'auto' ? Math.max(1, Math.min(256, availableParallelism())) : value;
}

/** One process serves (the default). */
async function serveHere(
  config: Config,
  options: ServeOptions,
  ctx: ServeContext & { readonly registry: MethodRegistry },
): Promise<ExitCode> {
  const { log, signals } = ctx;
  const cascade = await startCascade({
    config,
    registry: ctx.registry,
    logger: log,
    version: packageVersion(),
    quotasPath: ctx.quotasPath,
    reloadSource: ctx.reloadSource,
    host: options.host,
    port: options.port,
    accessLog: options.accessLog,
    description: options.demo ? 'cascade demo serving (mock nodes, no keys)' : 'cascade serving',
  });
  signals.serving(cascade);
  log.info({ signal: await signals.stopped }, 'shutting down: finishing in-flight requests');
  const summary = await cascade.close();
  log.info({ requests: summary.requests, usage: summary.usage }, 'cascade stopped');
  return summary.code;
}
