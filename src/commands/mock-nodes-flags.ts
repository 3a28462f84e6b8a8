/**
 * The flags of `cascade mock-nodes`, checked and turned into one MockNodeOptions per node. Every
 * bad value is a UsageError naming the flag and the value, with what was expected.
 */
import { UsageError } from '../core/index.js';
import {
  EVM_CLIENTS,
  MAX_RESPONSE_BYTES,
  MOCK_FAULT_KINDS,
  MockMempool,
  parseNodeErrorSpec,
  type EvmClient,
  type MockFault,
  type MockNodeOptions,
} from '../mock/index.js';

/** Flags of `cascade mock-nodes` (strings as commander hands them over). */
export interface MockNodesOptions {
  readonly config?: string | undefined;
  /** Bind every node here instead of its config address (0.0.0.0 in a container). */
  readonly host?: string | undefined;
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
  readonly rpcData?: string | undefined;
  readonly failureRate?: string | undefined;
  readonly failFirst?: string | undefined;
  readonly methodError?: readonly string[] | undefined;
  readonly evmClient?: string | undefined;
  readonly idleClose?: string | undefined;
  readonly sharedMempool?: boolean | undefined;
  readonly listMethodErrors?: boolean | undefined;
  readonly nodes?: string | undefined;
  readonly quiet?: boolean | undefined;
  readonly lag?: string | undefined;
  readonly ahead?: string | undefined;
  readonly otherChain?: boolean | undefined;
}

/** One node to start: where, and over which scheme. */
export interface MockTarget {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
}

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
    ['--rpc-data', options.rpcData, ['rpc_error']],
    ['--failure-rate', options.failureRate, MOCK_FAULT_KINDS],
    ['--fail-first', options.failFirst, MOCK_FAULT_KINDS],
  ];
  for (const [flag, value, kinds] of applies) {
    if (value === undefined) continue;
    if (kind === undefined) throw usage(flag, value, 'needs --fault');
    if (!kinds.includes(kind))
      throw usage(flag, value, `only applies to --fault ${kinds.join(' / ')}`);
  }
  const scoped =
    kind !== undefined ||
    !!options.methodError?.length ||
    !!options.lag ||
    !!options.ahead ||
    options.otherChain === true;
  if (options.nodes !== undefined && !scoped) {
    throw usage(
      '--nodes',
      options.nodes,
      'needs --fault, --method-error, --lag, --ahead or --other-chain',
    );
  }
}

function rpcErrorOf(options: MockNodesOptions): { code: number; data?: unknown } {
  const code = options.rpcCode ?? '-32005';
  if (!/^-?\d{1,10}$/.test(code) || Math.abs(Number(code)) > 2 ** 31) {
    throw usage('--rpc-code', code, 'expected a 32-bit integer such as -32005');
  }
  if (options.rpcData === undefined) return { code: Number(code) };
  try {
    return { code: Number(code), data: JSON.parse(options.rpcData) as unknown };
  } catch {
    throw usage('--rpc-data', options.rpcData, 'expected a JSON value, e.g. \'{"block":"0x10"}\'');
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
    case 'rpc_error':
      return { kind, ...rpcErrorOf(options), ...withStatus };
    case 'invalid_json':
    case 'empty':
    case 'stall_body':
    case 'truncate':
      return { kind, ...withStatus };
    default:
      return { kind } as MockFault;
  }
}

/** `--method-error METHOD=PRESET[:ARG]` values as a method → preset spec map (each checked). */
export function methodErrorsOf(values: readonly string[] = []): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const value of values) {
    const equals = value.indexOf('=');
    if (equals <= 0 || equals === value.length - 1) {
      throw usage(
        '--method-error',
        value,
        'expected METHOD=PRESET[:ARG], e.g. eth_call=geth.revert or getSlot=solana.slot_skipped:123',
      );
    }
    const spec = value.slice(equals + 1);
    try {
      parseNodeErrorSpec(spec);
      errors[value.slice(0, equals)] = spec;
    } catch (err) {
      throw usage('--method-error', value, (err as Error).message);
    }
  }
  return errors;
}

function evmClientOf(value: string | undefined): EvmClient | undefined {
  if (value === undefined || (EVM_CLIENTS as readonly string[]).includes(value)) {
    return value as EvmClient | undefined;
  }
  throw usage('--evm-client', value, `expected one of ${EVM_CLIENTS.join(', ')}`);
}

function idleCloseOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseNumber('--idle-close', value, { integer: true });
  if (ms === 0) throw usage('--idle-close', value, 'expected a whole number of ms > 0');
  return ms;
}

function delaysOf(options: MockNodesOptions, targets: readonly MockTarget[]): number[] {
  const delays = (options.delays ?? '').split(',').filter((part) => part.trim() !== '');
  if (delays.length > targets.length) {
    throw usage(
      '--delays',
      options.delays!,
      `${delays.length} values for ${targets.length} node(s)`,
    );
  }
  return delays.map((value) => parseNumber('--delays', value.trim()));
}

function scopedNodes(options: MockNodesOptions, targets: readonly MockTarget[]) {
  const names = options.nodes
    ?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names ?? []) {
    if (!targets.some((target) => target.name === name)) {
      throw usage('--nodes', name, `no such node; nodes: ${targets.map((t) => t.name).join(', ')}`);
    }
  }
  return (name: string) => names === undefined || names.includes(name);
}

/** The options of every node to start (validates every flag first). */
export function planNodes(
  options: MockNodesOptions,
  targets: readonly MockTarget[],
): MockNodeOptions[] {
  const delayMs = delaysOf(options, targets);
  const evmClient = evmClientOf(options.evmClient);
  const idleCloseMs = idleCloseOf(options.idleClose);
  const shared = {
    jitterMs: optionalNumber('--jitter', options.jitter, 0),
    responseBytes: optionalNumber('--response-bytes', options.responseBytes, 0, {
      integer: true,
      max: MAX_RESPONSE_BYTES,
    }),
    rttMs: optionalNumber('--rtt', options.rtt, 0),
    failureRate: optionalNumber('--failure-rate', options.failureRate, 1, { max: 1 }),
    failFirst: optionalNumber('--fail-first', options.failFirst, 0, { integer: true }),
    ...(evmClient === undefined ? {} : { evmClient }),
    ...(idleCloseMs === undefined ? {} : { idleCloseMs }),
    ...(options.sharedMempool ? { mempool: new MockMempool() } : {}),
  };
  const fault = faultOf(options);
  const methodErrors = methodErrorsOf(options.methodError);
  const inScope = scopedNodes(options, targets);
  const lag = lagOf(options);
  return targets.map((target, i) => ({
    ...shared,
    name: target.name,
    host: options.host ?? target.host,
    port: target.port,
    tls: options.tls === true || target.https,
    delayMs: delayMs[i] ?? 0,
    fault: fault && inScope(target.name) ? fault : { kind: 'none' },
    methodErrors: inScope(target.name) ? methodErrors : {},
    lag: inScope(target.name) ? lag : 0,
    otherChain: options.otherChain === true && inScope(target.name),
  }));
}

/** `--lag N` (serve the chain N slots/blocks behind) or `--ahead N` (a head N in the future). */
function lagOf(options: MockNodesOptions): number {
  const behind = optionalNumber('--lag', options.lag, 0, { integer: true, max: 1_000_000_000 });
  const ahead = optionalNumber('--ahead', options.ahead, 0, { integer: true, max: 1_000_000_000 });
  if (behind > 0 && ahead > 0)
    throw usage('--ahead', String(options.ahead), 'not together with --lag');
  return ahead > 0 ? -ahead : behind;
}
