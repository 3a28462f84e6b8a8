import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  UsageError,
  formatProblem,
  loadConfig,
  loadDotEnv,
  type NodeConfig,
} from '../core/index.js';
import {
  MAX_RESPONSE_BYTES,
  MOCK_FAULT_KINDS,
  startMockNodes,
  type MockFault,
  type MockNode,
  type MockNodeOptions,
} from '../mock/index.js';
import type { CommandIo, ExitCode } from './io.js';
import { renderTable } from './output.js';

/** Flags of `cascade mock-nodes` (strings as commander hands them over). */
export interface MockNodesOptions {
  readonly config?: string | undefined;
  readonly delays?: string | undefined;
  readonly jitter?: string | undefined;
  readonly responseBytes?: string | undefined;
  readonly tls?: boolean | undefined;
  readonly rtt?: string | undefined;
  readonly fault?: string | undefined;
  readonly faultStatus?: string | undefined;
  readonly faultBody?: string | undefined;
  readonly retryAfter?: string | undefined;
  readonly rpcCode?: string | undefined;
  readonly failureRate?: string | undefined;
  readonly failFirst?: string | undefined;
  readonly nodes?: string | undefined;
  readonly quiet?: boolean | undefined;
}

/** One node to start: where, and over which scheme. */
export interface MockTarget {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
}

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The six nodes of the shipped demo config. */
const DEFAULT_CONFIG = 'config/balancer_config/mock_nodes.toml';
const REPORT_INTERVAL_MS = 5000;
/** Kinds that take --fault-status (all but the ones that never answer). */
const WITH_STATUS: readonly string[] = MOCK_FAULT_KINDS.filter(
  (kind) => kind !== 'none' && kind !== 'stall' && kind !== 'close',
);

function usage(flag: string, value: string, expected: string): UsageError {
  return new UsageError(`${flag} ${JSON.stringify(value)}: ${expected}`);
}

function parseNumber(
  flag: string,
  value: string,
  options: { integer?: boolean; max?: number } = {},
): number {
  const pattern = options.integer ? /^\d+$/ : /^\d+(\.\d+)?$/;
  const n = Number(value);
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  if (!pattern.test(value.trim()) || n > max) {
    const kind = options.integer ? 'a whole number' : 'a number';
    const range = options.max === undefined ? '≥ 0' : `from 0 to ${max.toLocaleString('en-US')}`;
    throw usage(flag, value, `expected ${kind} ${range}`);
  }
  return n;
}

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

function optionalNumber(
  flag: string,
  value: string | undefined,
  fallback: number,
  options?: { integer?: boolean; max?: number },
): number {
  return value === undefined ? fallback : parseNumber(flag, value, options);
}

/** Fault flags need --fault, and each applies to some kinds only. */
function checkFaultFlags(options: MockNodesOptions): void {
  const kind = options.fault;
  const applies: ReadonlyArray<readonly [string, string | undefined, readonly string[]]> = [
    ['--fault-status', options.faultStatus, WITH_STATUS],
    ['--fault-body', options.faultBody, ['http']],
    ['--retry-after', options.retryAfter, ['http']],
    ['--rpc-code', options.rpcCode, ['rpc_error']],
    ['--failure-rate', options.failureRate, MOCK_FAULT_KINDS],
    ['--fail-first', options.failFirst, MOCK_FAULT_KINDS],
    ['--nodes', options.nodes, MOCK_FAULT_KINDS],
  ];
  for (const [flag, value, kinds] of applies) {
    if (value === undefined) continue;
    if (kind === undefined) throw usage(flag, value, 'needs --fault');
    if (!kinds.includes(kind))
      throw usage(flag, value, `only applies to --fault ${kinds.join(' / ')}`);
  }
}

/** The fault the flags describe, or undefined without --fault. */
export function faultOf(options: MockNodesOptions): MockFault | undefined {
  const kind = options.fault;
  if (kind !== undefined && !(MOCK_FAULT_KINDS as readonly string[]).includes(kind)) {
    throw usage('--fault', kind, `expected one of ${MOCK_FAULT_KINDS.join(', ')}`);
  }
  checkFaultFlags(options);
  if (kind === undefined) return undefined;
  const status = optionalNumber('--fault-status', options.faultStatus, 0, {
    integer: true,
    max: 599,
  });
  if (options.faultStatus !== undefined && status < 200) {
    throw usage('--fault-status', options.faultStatus, 'expected 200..599');
  }
  const withStatus = status === 0 ? {} : { status };
  switch (kind) {
    case 'http': {
      const retryAfter = optionalNumber('--retry-after', options.retryAfter, -1, { integer: true });
      const headers: Record<string, string> =
        retryAfter < 0 ? {} : { 'retry-after': String(retryAfter) };
      return { kind, status: status || 503, body: options.faultBody ?? '', headers };
    }
    case 'rpc_error': {
      const code = options.rpcCode ?? '-32005';
      if (!/^-?\d{1,10}$/.test(code) || Math.abs(Number(code)) > 2 ** 31) {
        throw usage('--rpc-code', code, 'expected a 32-bit integer such as -32005');
      }
      return { kind, code: Number(code), ...withStatus };
    }
    case 'invalid_json':
    case 'empty':
    case 'stall_body':
    case 'truncate':
      return { kind, ...withStatus };
    default:
      return { kind } as MockFault;
  }
}

/** The options of every node to start (validates every flag first). */
export function planNodes(
  options: MockNodesOptions,
  targets: readonly MockTarget[],
): MockNodeOptions[] {
  const delays = (options.delays ?? '').split(',').filter((part) => part.trim() !== '');
  if (delays.length > targets.length) {
    throw usage(
      '--delays',
      options.delays!,
      `${delays.length} values for ${targets.length} node(s)`,
    );
  }
  const delayMs = delays.map((value) => parseNumber('--delays', value.trim()));
  const shared = {
    jitterMs: optionalNumber('--jitter', options.jitter, 0),
    responseBytes: optionalNumber('--response-bytes', options.responseBytes, 0, {
      integer: true,
      max: MAX_RESPONSE_BYTES,
    }),
    rttMs: optionalNumber('--rtt', options.rtt, 0),
    failureRate: optionalNumber('--failure-rate', options.failureRate, 1, { max: 1 }),
    failFirst: optionalNumber('--fail-first', options.failFirst, 0, { integer: true }),
  };
  const fault = faultOf(options);
  const faulty = options.nodes
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of faulty ?? []) {
    if (!targets.some((target) => target.name === name)) {
      throw usage('--nodes', name, `no such node; nodes: ${targets.map((t) => t.name).join(', ')}`);
    }
  }
  return targets.map((target, i) => ({
    ...shared,
    name: target.name,
    host: target.host,
    port: target.port,
    tls: options.tls === true || target.https,
    delayMs: delayMs[i] ?? 0,
    fault: fault && (!faulty || faulty.includes(target.name)) ? fault : { kind: 'none' },
  }));
}

function describeFault(node: MockNodeOptions): string {
  const fault = node.fault ?? { kind: 'none' };
  if (fault.kind === 'none') return 'none';
  let text: string = fault.kind;
  if (fault.kind === 'http') {
    text += ` ${fault.status}`;
    if (fault.headers?.['retry-after']) text += ` (retry-after ${fault.headers['retry-after']})`;
  } else if (fault.kind === 'rpc_error') text += ` ${fault.code}`;
  else if ('status' in fault && fault.status !== undefined) text += ` ${fault.status}`;
  if (node.failFirst) text += `, first ${node.failFirst} request(s)`;
  else if (node.failureRate !== undefined && node.failureRate < 1)
    text += `, ${node.failureRate * 100}% of requests`;
  return text;
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

/**
 * `cascade mock-nodes`: start one mock per local node of the config (default: the six demo
 * nodes), print what runs, and serve until SIGINT/SIGTERM (or `stop`, for tests).
 */
export async function runMockNodes(
  options: MockNodesOptions,
  io: CommandIo,
  stop?: Promise<unknown>,
): Promise<ExitCode> {
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
