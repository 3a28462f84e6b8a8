import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import {
  ConfigError,
  LocalUsageLedger,
  MethodRegistry,
  ProxyServer,
  QuotaFlusher,
  StartupError,
  acquireServerLock,
  formatProblem,
  loadConfig,
  loadDotEnv,
  quotaReport,
  releaseServerLock,
  startAdminServer,
  type AdminServer,
  type Config,
  type RolloverEvent,
} from '../core/index.js';
import { startMockNodes, type MockNode } from '../mock/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { createLogger } from './logger.js';
import { reloadConfig } from './serve-reload.js';
import { packageVersion } from './version.js';

/** Flags of `cascade serve`. */
export interface ServeOptions {
  readonly config?: string | undefined;
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly demo?: boolean | undefined;
  readonly accessLog?: boolean | undefined;
  readonly quotas?: string | undefined;
}

/** Latencies of the demo's six mock nodes (ms), like CascadeRPC's mock_node. */
const DEMO_DELAYS = [3, 5, 7, 9, 12, 20];
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

function loadOrThrow(
  options: ServeOptions,
  io: CommandIo,
  registry: MethodRegistry,
  logger: Logger,
): Config {
  const demo = options.demo === true && options.config === undefined;
  const result = loadConfig({
    configPath: demo
      ? path.join(PACKAGE_ROOT, 'config/balancer_config/mock_nodes.toml')
      : options.config,
    env: io.env,
    cwd: demo ? PACKAGE_ROOT : io.cwd,
    registry,
  });
  for (const warning of result.warnings) logger.warn(`config: ${formatProblem(warning)}`);
  if (!result.config) {
    for (const problem of result.errors) io.err(`error: ${formatProblem(problem)}`);
    throw new ConfigError(
      `${result.path}: ${result.errors.length} problem(s) in the config; nothing was started`,
      result.errors.map(formatProblem),
      'fix them and start again (`cascade validate-config` checks a file without starting)',
    );
  }
  return result.config;
}

async function startDemoNodes(config: Config): Promise<{ config: Config; mocks: MockNode[] }> {
  const mocks = await startMockNodes(
    config.nodes.map((node, i) => ({ name: node.name, port: 0, delayMs: DEMO_DELAYS[i] ?? 0 })),
  );
  const nodes = config.nodes.map((node, i) => ({
    ...node,
    url: mocks[i]!.url,
    redactedUrl: mocks[i]!.url,
  }));
  return { config: { ...config, nodes }, mocks };
}

function logRollover(logger: Logger, events: readonly RolloverEvent[]): void {
  for (const event of events) {
    if (event.kind !== 'reset') continue;
    const fields = {
      node: event.name,
      from: event.from,
      to: event.to,
      used_before: event.usedBefore,
    };
    if (event.longGap)
      logger.warn(fields, `billing period reset after ${event.gapDays} days without a flush`);
    else logger.info(fields, 'billing period reset');
  }
}

async function startAdmin(
  server: ProxyServer,
  ledger: LocalUsageLedger,
  flusher: QuotaFlusher,
  logger: Logger,
): Promise<AdminServer | undefined> {
  const port = server.config.server.adminPort;
  if (port === undefined) return undefined;
  const report = () =>
    quotaReport(
      server.nodes(),
      (name) => ({ used: ledger.counter(name).used, periodStart: ledger.periodStart(name) }),
      new Date(),
    );
  const admin = await startAdminServer(
    port,
    {
      report,
      nodeNames: () => server.nodes().map((node) => node.name),
      async reset(names) {
        for (const name of names) ledger.reset(name);
        const { error } = await flusher.tick();
        if (error) throw error;
        return report();
      },
    },
    logger,
  );
  logger.info(
    { url: `http://127.0.0.1:${admin.port}/admin/quota` },
    'admin listener (loopback only)',
  );
  return admin;
}

/** Logs each node the first time its usage passes its spillover threshold in a period. */
function thresholdWatcher(
  server: ProxyServer,
  ledger: LocalUsageLedger,
  logger: Logger,
): () => void {
  const over = new Set<string>();
  return () => {
    for (const node of server.nodes()) {
      const used = ledger.counter(node.name).used;
      if (used > node.spilloverThreshold && !over.has(node.name)) {
        over.add(node.name);
        logger.warn(
          { node: node.name, used, threshold: node.spilloverThreshold },
          'quota threshold crossed; traffic spills to the next node',
        );
      } else if (used <= node.spilloverThreshold) {
        over.delete(node.name);
      }
    }
  };
}

function logStartup(
  server: ProxyServer,
  options: ServeOptions,
  quotasPath: string,
  logger: Logger,
): void {
  for (const node of server.nodes()) {
    const limit = (value: number) => (value === Infinity ? null : value);
    logger.info(
      {
        node: node.name,
        tier: node.tier,
        rps_limit: limit(node.rpsLimit),
        max_concurrent: limit(node.maxConcurrent),
        monthly_limit: node.monthlyLimit ?? 'unmetered',
        url: node.redactedUrl,
      },
      'node',
    );
  }
  const host = options.host ?? server.config.server.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${server.port}`;
  logger.info(
    {
      url,
      nodes: server.nodes().length,
      metrics: server.config.server.enableMetrics,
      quotas: quotasPath,
    },
    options.demo ? 'cascade demo serving (mock nodes, no keys)' : 'cascade serving',
  );
}

/**
 * Resolves with the first SIGINT/SIGTERM. The handlers stay installed afterwards, so a second
 * Ctrl-C during the drain cannot kill the process before the final quota write.
 */
function stopSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) {
        logger.warn({ signal }, 'already shutting down; finishing in-flight requests first');
        return;
      }
      stopping = true;
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `cascade serve`: run the proxy until SIGINT/SIGTERM; reload on SIGHUP. */
export async function runServe(options: ServeOptions, io: CommandIo): Promise<ExitCode> {
  loadDotEnv(io.cwd, io.env);
  const logger = createLogger(io.env);
  const registry = new MethodRegistry();
  let config = loadOrThrow(options, io, registry, logger);
  let mocks: MockNode[] = [];
  if (options.demo) ({ config, mocks } = await startDemoNodes(config));
  const ledger = new LocalUsageLedger();
  const quotasPath = path.resolve(io.cwd, options.quotas ?? config.server.quotasPath);
  let server: ProxyServer | undefined;
  let admin: AdminServer | undefined;
  const flusher = new QuotaFlusher({
    ledger,
    path: quotasPath,
    nodes: () => server?.nodes() ?? config.nodes,
  });
  try {
    logRollover(logger, (await flusher.restore()).events);
    server = await ProxyServer.start({
      config,
      registry,
      logger,
      usage: ledger,
      version: packageVersion(),
      host: options.host,
      port: options.port,
      accessLog: options.accessLog,
    });
    admin = await startAdmin(server, ledger, flusher, logger);
    acquireServerLock(quotasPath, admin?.port ?? null);
  } catch (err) {
    await admin?.close();
    await server?.close(0);
    await Promise.all(mocks.map((mock) => mock.close()));
    if (err instanceof Error && !(err instanceof StartupError) && server) {
      throw new StartupError(
        `cannot claim ${quotasPath}: ${err.message}`,
        'make sure its directory exists and is writable',
      );
    }
    throw err;
  }
  const running = server;
  const stopped = stopSignal(logger);
  let shuttingDown = false;
  const onHup = (): void => {
    if (shuttingDown) logger.warn('shutting down; reload ignored');
    else if (options.demo)
      logger.error(
        'config reload failed; keeping the running config: the demo has no config file to reload',
      );
    else
      reloadConfig({ server: running, flusher, registry, logger, io, configPath: options.config });
  };
  process.on('SIGHUP', onHup);
  // Threshold crossings are checked every second: a flush period (60 s) is too late to hear of it.
  const thresholdTimer = setInterval(thresholdWatcher(running, ledger, logger), 1000);
  const flushTimer = setInterval(() => {
    void flusher.tick().then(({ events, error }) => {
      logRollover(logger, events);
      if (error)
        logger.error(
          { err: error.message, file: quotasPath },
          'quota flush failed; retrying at the next tick',
        );
    });
  }, config.server.quotaFlushSeconds * 1000);
  logStartup(running, options, quotasPath, logger);

  logger.info({ signal: await stopped }, 'shutting down: finishing in-flight requests');
  shuttingDown = true;
  clearInterval(flushTimer);
  clearInterval(thresholdTimer);
  await admin?.close();
  await running.close();
  let code: ExitCode = 0;
  try {
    await flusher.close();
  } catch (err) {
    logger.error({ err: (err as Error).message, file: quotasPath }, 'final quota write failed');
    code = 1;
  }
  releaseServerLock(quotasPath);
  process.off('SIGHUP', onHup);
  await Promise.all(mocks.map((mock) => mock.close()));
  const usage = Object.fromEntries(
    [...ledger.snapshot()].map(([name, entry]) => [name, entry.used]),
  );
  logger.info({ requests: running.requestCounts(), usage }, 'cascade stopped');
  return code;
}
