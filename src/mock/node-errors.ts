/**
 * Real nodes' error answers, by name: `nodeError('geth.revert', 'ERC20: …')`, or as a method
 * error spec string `"geth.revert:ERC20: …"`. Each preset cites the client source (or public
 * report) its code, message and `data` come from; see evm-errors.ts, solana-errors.ts and
 * provider-errors.ts.
 */
import { EVM_ERROR_PRESETS } from './evm-errors.js';
import type { NodeErrorPreset } from './node-error-preset.js';
import { LOGS_LIMIT_PRESETS } from './logs-limit-errors.js';
import { PROVIDER_ERROR_PRESETS } from './provider-errors.js';
import { SOLANA_ERROR_PRESETS } from './solana-errors.js';
import type { MethodErrorSpec, MockRpcError } from './types.js';

/** Every preset, by name. */
export const NODE_ERROR_PRESETS: Readonly<Record<string, NodeErrorPreset>> = {
  ...EVM_ERROR_PRESETS,
  ...SOLANA_ERROR_PRESETS,
  ...PROVIDER_ERROR_PRESETS,
  ...LOGS_LIMIT_PRESETS,
};

/** Preset names, in help-text order. */
export const NODE_ERROR_NAMES: readonly string[] = Object.keys(NODE_ERROR_PRESETS);

/** Thrown by a method handler to answer the call with a node error instead of a result. */
export class NodeErrorAnswer extends Error {
  constructor(readonly error: MockRpcError) {
    super(error.message);
    this.name = 'NodeErrorAnswer';
  }
}

/** The preset `name`'s error for `arg` (its default when omitted); RangeError when unknown. */
export function nodeError(name: string, arg?: string | number): MockRpcError {
  const preset = NODE_ERROR_PRESETS[name];
  if (preset === undefined) {
    throw new RangeError(
      `unknown node error preset ${JSON.stringify(name)}; presets: ${NODE_ERROR_NAMES.join(', ')}`,
    );
  }
  const { param } = preset;
  if (param === undefined) {
    if (arg !== undefined) {
      throw new RangeError(
        `node error preset ${name} takes no argument (got ${JSON.stringify(arg)})`,
      );
    }
    return preset.build('');
  }
  const text = String(arg ?? param.fallback);
  if (param.kind === 'integer' && !/^\d{1,15}$/.test(text)) {
    throw new RangeError(
      `node error preset ${name}: ${param.name} = ${JSON.stringify(text)}; expected a whole number`,
    );
  }
  return preset.build(text);
}

/** `"name"` or `"name:arg"` (the argument may itself contain colons) as an error. */
export function parseNodeErrorSpec(spec: string): MockRpcError {
  const colon = spec.indexOf(':');
  return colon === -1 ? nodeError(spec) : nodeError(spec.slice(0, colon), spec.slice(colon + 1));
}

function isJsonValue(value: unknown): boolean {
  try {
    return value === undefined || JSON.stringify(value) !== undefined;
  } catch {
    return false;
  }
}

/** Checks an explicit error; throws RangeError naming `where` and the bad field. */
export function checkRpcError(error: MockRpcError, where: string): void {
  const bad = (field: string, value: unknown, expected: string) =>
    new RangeError(`${where}.${field} = ${JSON.stringify(value) ?? String(value)}; ${expected}`);
  if (!Number.isInteger(error.code)) throw bad('code', error.code, 'expected an integer');
  if (typeof error.message !== 'string') throw bad('message', error.message, 'expected a string');
  if (!isJsonValue(error.data)) throw bad('data', String(error.data), 'expected a JSON value');
  const { status } = error;
  if (status !== undefined && !(Number.isInteger(status) && status >= 200 && status <= 599)) {
    throw bad('status', status, 'expected 200..599');
  }
}

/** A method error spec as the error it stands for; throws RangeError naming `where`. */
export function resolveMethodError(spec: MethodErrorSpec, where: string): MockRpcError {
  if (typeof spec === 'string') {
    try {
      return parseNodeErrorSpec(spec);
    } catch (err) {
      throw new RangeError(`${where}: ${(err as Error).message}`);
    }
  }
  if (spec === null || typeof spec !== 'object') {
    throw new RangeError(
      `${where} = ${JSON.stringify(spec)}; expected a preset name or {code, message}`,
    );
  }
  checkRpcError(spec, where);
  return spec;
}

/** The error object as JSON text: `{"code":…,"message":…[,"data":…]}`. */
export function errorObjectJson(error: Pick<MockRpcError, 'code' | 'message' | 'data'>): string {
  return JSON.stringify({ code: error.code, message: error.message, data: error.data });
}

/** A whole JSON-RPC error answer; `idJson` is already JSON text. */
export function errorAnswerJson(objectJson: string, idJson: string): string {
  return `{"jsonrpc":"2.0","error":${objectJson},"id":${idJson}}`;
}

/** An error ready to write: its object's JSON once, its HTTP status and headers. */
export interface PreparedError {
  readonly objectJson: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>> | undefined;
}

/** Serialises an error once, for every answer that uses it. */
export function prepareError(error: MockRpcError): PreparedError {
  return {
    objectJson: errorObjectJson(error),
    status: error.status ?? 200,
    headers: error.headers,
  };
}

/** Method errors resolved and serialised; throws RangeError naming the bad method. */
export function prepareMethodErrors(
  methodErrors: Readonly<Record<string, MethodErrorSpec>>,
): ReadonlyMap<string, PreparedError> {
  if (methodErrors === null || typeof methodErrors !== 'object' || Array.isArray(methodErrors)) {
    throw new RangeError(
      `mock behaviour: methodErrors = ${JSON.stringify(methodErrors)}; expected { method: error }`,
    );
  }
  const prepared = new Map<string, PreparedError>();
  for (const [method, spec] of Object.entries(methodErrors)) {
    const where = `mock behaviour: methodErrors[${JSON.stringify(method)}]`;
    prepared.set(method, prepareError(resolveMethodError(spec, where)));
  }
  return prepared;
}
