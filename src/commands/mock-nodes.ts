import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  formatProblem,
  loadConfig,
  loadDotEnv,
  type NodeConfig,
} from '../core/index.js';
import {
  NODE_ERROR_NAMES,
  NODE_ERROR_PRESETS,
  startMockNodes,
  type MockNode,
  type MockNodeOptions,
} from '../mock/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { planNodes, type MockNodesOptions, type MockTarget } from './mock-nodes-flags.js';
import { renderTable } from './output.js';

export { faultOf, planNodes } from './mock-nodes-flags.js';
export type { MockNodesOptions, MockTarget } from './mock-nodes-flags.js';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The six nodes of the shipped demo config. */
const DEFAULT_CONFIG = 'config/balancer_config/mock_nodes.toml';
const REPORT_INTERVAL_MS = 5000;

function isLocalHost(hostname: string): boolean {
  return hostname === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(hostname) || hostname === '[::1]';
}

/** The local nodes of a config, in config order; non-local ones are reported in `skipped`. */
export function localTargets(
  nodes: ReadonlyArray<Pick<NodeConfig, 'name' | 'url' | 'redactedUrl'>>,
): { targets: MockTarget[]; skipped: string[] } {
  const targets: MockTarget[] = [];
  const skipped: string[] = [];
  for (const node of nodes) {
    const url = new URL(node.url);
    if (!isLocalHost(url.hostname)) {
      skipped.push(`${node.name} (${node.redactedUrl}: not a local address)`);
      continue;
    }
    const https = url.protocol === 'https:';
    const host = url.hostname === 'localhost' ? '127.0.0.1' : url.hostname.replace(/^\[|\]$/g, '');
    targets.push({ name: node.name, host, port: Number(url.port || (https ? 443 : 80)), https });
  }
  return { targets, skipped };
}

function loadTargets(
  options: MockNodesOptions,
  io: CommandIo,
): { targets: MockTarget[]; skipped: string[] } {
  const result =
    options.config === undefined
      ? loadConfig({
          configPath: path.join(PACKAGE_ROOT, DEFAULT_CONFIG),
          env: io.env,
          cwd: PACKAGE_ROOT,
        })
      : loadConfig({ configPath: options.config, env: io.env, cwd: io.cwd });
  if (!result.config) {
    for (const problem of result.errors) io.err(`error: ${formatProblem(problem)}`);
    throw new ConfigError(
      `${result.path}: ${result.errors.length} problem(s) in the config; no mock node was started`,
      result.errors.map(formatProblem),
    );
  }
  return localTargets(result.config.nodes);
}

function describeMethodErrors(node: MockNodeOptions): string {
  return Object.entries(node.methodErrors ?? {})
    .map(([method, spec]) => `${method}=${typeof spec === 'string' ? spec : spec.code}`)
    .join(', ');
}

function describeFault(node: MockNodeOptions): string {
  const lag = node.lag ?? 0;
  const behind =
    lag > 0 ? `${lag} slots/blocks behind` : lag < 0 ? `${-lag} slots/blocks ahead` : '';
  const chain = [behind, node.otherChain === true ? 'another chain' : '']
    .filter(Boolean)
    .join(', ');
  const text = describeErrors(node);
  if (chain === '') return text;
  return text === 'none' ? chain : `${text}; ${chain}`;
}

function describeErrors(node: MockNodeOptions): string {
  const fault = node.fault ?? { kind: 'none' };
  const methodErrors = describeMethodErrors(node);
  if (fault.kind === 'none') return methodErrors || 'none';
  let text: string = fault.kind;
  if (fault.kind === 'http') {
    text += ` ${fault.status}`;
    if (fault.headers?.['retry-after']) text += ` (retry-after ${fault.headers['retry-after']})`;
  } else if (fault.kind === 'rpc_error') text += ` ${fault.code}`;
  else if ('status' in fault && fault.status !== undefined) text += ` ${fault.status}`;
  if (node.failFirst) text += `, first ${node.failFirst} request(s)`;
  else if (node.failureRate !== undefined && node.failureRate < 1)
    text += `, ${node.failureRate * 100}% of requests`;
  return methodErrors ? `${text}; ${methodErrors}` : text;
}

/** The table of what was started. */
export function renderStarted(
  nodes: readonly MockNode[],
  plans: readonly MockNodeOptions[],
): string {
  return renderTable(
    ['node', 'url', 'delay', 'fault'],
    nodes.map((node, i) => {
      const plan = plans[i]!;
      const jitter = plan.jitterMs ? ` + 0..${plan.jitterMs}` : '';
      return [node.name, node.url, `${plan.delayMs ?? 0}${jitter} ms`, describeFault(plan)];
    }),
  );
}

function describeShared(nodes: readonly MockNode[], plan: MockNodeOptions): string {
  const extras = [
    plan.rttMs ? `simulated RTT ${plan.rttMs} ms` : '',
    plan.responseBytes ? `answers padded to ${plan.responseBytes} bytes` : '',
    nodes.some((node) => node.cert) ? 'https, self-signed certificate' : '',
    plan.idleCloseMs
      ? `idle connections closed after ${plan.idleCloseMs} ms, no Keep-Alive hint`
      : '',
    plan.evmClient && plan.evmClient !== 'geth' ? `${plan.evmClient} "already known"` : '',
    plan.mempool ? 'one shared mempool' : '',
  ].filter(Boolean);
  return extras.length > 0 ? ` (${extras.join(', ')})` : '';
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

function startReporting(nodes: readonly MockNode[], io: CommandIo): NodeJS.Timeout {
  let last = nodes.map((node) => node.stats().requests);
  let lastAt = performance.now();
  return setInterval(() => {
    const now = performance.now();
    const counts = nodes.map((node) => node.stats().requests);
    const rates = nodes.map((node, i) => {
      const rate = ((counts[i]! - last[i]!) * 1000) / (now - lastAt);
      return `${node.name} ${Math.round(rate).toLocaleString('en-US')}`;
    });
    io.out(`req/s: ${rates.join(' · ')}`);
    last = counts;
    lastAt = now;
  }, REPORT_INTERVAL_MS);
}

/** The table of error presets `--method-error` takes. */
export function renderMethodErrorPresets(): string {
  return renderTable(
    ['preset', 'argument', 'answer'],
    NODE_ERROR_NAMES.map((name) => {
      const preset = NODE_ERROR_PRESETS[name]!;
      const fallback = String(preset.param?.fallback);
      const shown = fallback.length > 24 ? `${fallback.slice(0, 23)}…` : fallback;
      const param = preset.param ? `${preset.param.name} (default ${shown})` : '';
      return [name, param, preset.summary];
    }),
  );
}

/**
 * `cascade mock-nodes`: start one mock per local node of the config (default: the six demo
 * nodes), print what runs, and serve until SIGINT/SIGTERM (or `stop`, for tests).
 */
export async function runMockNodes(
  options: MockNodesOptions,
  io: CommandIo,
  stop?: Promise<unknown>,
): Promise<ExitCode> {
  if (options.listMethodErrors) {
    io.out(renderMethodErrorPresets());
    return 0;
  }
  loadDotEnv(io.cwd, io.env);
  const { targets, skipped } = loadTargets(options, io);
  for (const note of skipped) io.err(`note: skipping ${note}`);
  if (targets.length === 0) {
    throw new ConfigError(
      'the config has no node on localhost/127.x to mock',
      [],
      'point --config at a file with local node URLs',
    );
  }
  const plans = planNodes(options, targets);
  const nodes = await startMockNodes(plans);
  io.out(renderStarted(nodes, plans));
  io.out(`${nodes.length} mock node(s) running${describeShared(nodes, plans[0]!)}; Ctrl-C to stop`);
  const reporter = options.quiet ? undefined : startReporting(nodes, io);
  await (stop ?? waitForSignal());
  clearInterval(reporter);
  await Promise.all(nodes.map((node) => node.close()));
  io.out('mock nodes stopped');
  return 0;
}
