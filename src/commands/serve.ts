import path from 'node:path';
import type { Logger } from 'pino';
import {
  MethodRegistry,
  loadConfig,
  loadDotEnv,
  startCascade,
  type Cascade,
} from '../core/index.js';
import type { MockNode } from '../mock/index.js';
import { withDemoNodes } from './demo-nodes.js';
import type { CommandIo, ExitCode } from './io.js';
import { MOCK_NODES_CONFIG, configSource, loadOrFail } from './load-or-fail.js';
import { createLogger } from './logger.js';
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

/**
 * Signal handling, installed before the server starts (its startup line may be answered by a
 * signal at once): the first SIGINT/SIGTERM resolves `stopped`, SIGHUP reloads. The handlers
 * stay installed, so a second Ctrl-C during the drain cannot kill the process before the final
 * quota write.
 */
function handleSignals(log: Logger): {
  stopped: Promise<NodeJS.Signals>;
  serving(c: Cascade): void;
} {
  let cascade: Cascade | undefined;
  process.on('SIGHUP', () => void cascade?.reload());
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      if (stopping) log.warn({ signal }, 'already shutting down; finishing in-flight requests');
      stopping = true;
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return { stopped, serving: (running) => (cascade = running) };
}

/** `cascade serve`: run the proxy until SIGINT/SIGTERM; reload on SIGHUP. */
export async function runServe(options: ServeOptions, io: CommandIo): Promise<ExitCode> {
  loadDotEnv(io.cwd, io.env);
  const log = createLogger(io.env);
  const registry = new MethodRegistry();
  const shipped = options.demo === true ? MOCK_NODES_CONFIG : undefined;
  const source = { ...configSource(options.config, io, shipped), registry };
  let config = loadOrFail(source, io, 'nothing was started', (line) => log.warn(`config: ${line}`));
  let mocks: MockNode[] = [];
  if (options.demo) ({ config, mocks } = await withDemoNodes(config));
  const signals = handleSignals(log);
  let cascade: Cascade;
  try {
    cascade = await startCascade({
      config,
      registry,
      logger: log,
      version: packageVersion(),
      quotasPath: path.resolve(io.cwd, options.quotas ?? config.server.quotasPath),
      reloadSource: options.demo ? undefined : () => loadConfig(source),
      host: options.host,
      port: options.port,
      accessLog: options.accessLog,
      description: options.demo ? 'cascade demo serving (mock nodes, no keys)' : 'cascade serving',
    });
  } catch (err) {
    await Promise.all(mocks.map((mock) => mock.close()));
    throw err;
  }
  signals.serving(cascade);
  const signal = await signals.stopped;
  log.info({ signal }, 'shutting down: finishing in-flight requests');
  const summary = await cascade.close();
  await Promise.all(mocks.map((mock) => mock.close()));
  log.info({ requests: summary.requests, usage: summary.usage }, 'cascade stopped');
  return summary.code;
}
