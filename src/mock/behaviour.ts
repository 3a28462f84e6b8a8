/** Defaults and validation of a mock node's behaviour. */
import { checkRpcError, prepareMethodErrors } from './node-errors.js';
import { EVM_CLIENTS, MOCK_FAULT_KINDS, type MockBehaviour, type MockFault } from './types.js';

/** A healthy node answering at once. */
export const DEFAULT_BEHAVIOUR: Readonly<MockBehaviour> = {
  delayMs: 0,
  jitterMs: 0,
  fault: { kind: 'none' },
  failureRate: 1,
  failFirst: 0,
  responseBytes: 0,
  methodErrors: {},
  evmClient: 'geth',
  lag: 0,
  otherChain: false,
};

/** Largest padded answer: big enough for 10–20 MB tests, small enough to stay in memory. */
export const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

function check(ok: boolean, what: string, value: unknown, expected: string): void {
  if (!ok) throw new RangeError(`mock behaviour: ${what} = ${JSON.stringify(value)}; ${expected}`);
}

function isCount(value: number, max = Number.MAX_SAFE_INTEGER): boolean {
  return Number.isInteger(value) && value >= 0 && value <= max;
}

function checkStatus(status: number | undefined, what: string): void {
  if (status === undefined) return;
  check(
    Number.isInteger(status) && status >= 200 && status <= 599,
    what,
    status,
    'expected 200..599',
  );
}

function checkFault(fault: MockFault): void {
  check(
    fault !== null &&
      typeof fault === 'object' &&
      (MOCK_FAULT_KINDS as readonly string[]).includes(fault.kind),
    'fault.kind',
    (fault as { kind?: unknown } | null)?.kind,
    `expected one of ${MOCK_FAULT_KINDS.join(', ')}`,
  );
  switch (fault.kind) {
    case 'http':
      check(fault.status !== undefined, 'fault.status', fault.status, 'required for kind http');
      checkStatus(fault.status, 'fault.status');
      return;
    case 'rpc_error':
      checkRpcError(
        { code: fault.code, message: fault.message ?? '', data: fault.data, status: fault.status },
        'mock behaviour: fault',
      );
      return;
    case 'invalid_json':
    case 'empty':
    case 'stall_body':
    case 'truncate':
      checkStatus(fault.status, 'fault.status');
      return;
    default:
      return;
  }
}

/**
 * `current` with `patch` applied; throws RangeError naming the first bad field. A patch's
 * `methodErrors` replaces the whole map (`{}` clears it).
 */
export function mergeBehaviour(
  current: Readonly<MockBehaviour>,
  patch: Partial<MockBehaviour>,
): MockBehaviour {
  const next: MockBehaviour = { ...current };
  for (const key of Object.keys(DEFAULT_BEHAVIOUR) as (keyof MockBehaviour)[]) {
    if (patch[key] !== undefined) Object.assign(next, { [key]: patch[key] });
  }
  check(
    Number.isFinite(next.delayMs) && next.delayMs >= 0,
    'delayMs',
    next.delayMs,
    'expected ≥ 0',
  );
  check(
    Number.isFinite(next.jitterMs) && next.jitterMs >= 0,
    'jitterMs',
    next.jitterMs,
    'expected ≥ 0',
  );
  check(
    next.failureRate >= 0 && next.failureRate <= 1,
    'failureRate',
    next.failureRate,
    'expected 0..1',
  );
  check(isCount(next.failFirst), 'failFirst', next.failFirst, 'expected an integer ≥ 0');
  check(
    isCount(next.responseBytes, MAX_RESPONSE_BYTES),
    'responseBytes',
    next.responseBytes,
    `expected an integer 0..${MAX_RESPONSE_BYTES}`,
  );
  checkFault(next.fault);
  check(
    (EVM_CLIENTS as readonly string[]).includes(next.evmClient),
    'evmClient',
    next.evmClient,
    `expected one of ${EVM_CLIENTS.join(', ')}`,
  );
  check(
    typeof next.otherChain === 'boolean',
    'otherChain',
    next.otherChain,
    'expected true or false',
  );
  check(Number.isSafeInteger(next.lag), 'lag', next.lag, 'expected a whole number of slots/blocks');
  prepareMethodErrors(next.methodErrors);
  return next;
}
