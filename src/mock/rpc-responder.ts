/**
 * JSON-RPC 2.0 semantics of a mock node: parse a body once, answer single calls and batches
 * (notifications get no entry), echo ids, and the standard -32700/-32600/-32601/-32602 errors.
 */
import { ERROR_MESSAGE, RPC_ERROR, errorJson } from '../core/protocol/index.js';
import { EVM_METHOD_SPECS } from './evm-methods.js';
import {
  InvalidParamsError,
  isRecord,
  type MethodContext,
  type MethodSpec,
  type MethodTable,
} from './method-spec.js';
import { paddedResult, whitespace } from './padding.js';
import { SOLANA_METHOD_SPECS } from './solana-methods.js';

/** A request body read once. */
export type ParsedBody =
  | { readonly kind: 'parse_error' }
  | { readonly kind: 'single'; readonly call: unknown }
  | { readonly kind: 'batch'; readonly calls: readonly unknown[] };

/** A response body: one string, or parts written in order (padded answers share big buffers). */
export type ResponseBody = string | ReadonlyArray<string | Buffer>;

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const RESULT_HEAD = '{"jsonrpc":"2.0","result":';
/** `{"jsonrpc":"2.0","result":` + `,"id":` + `}` around the result and the id. */
const ENVELOPE_BYTES = RESULT_HEAD.length + 7;

/** Every method the mock answers (Solana and EVM on the same node, like a multi-chain gateway). */
export const MOCK_METHODS: MethodTable = new Map<string, MethodSpec>([
  ...SOLANA_METHOD_SPECS,
  ...EVM_METHOD_SPECS,
]);

/** Parses a body; never throws. */
export function parseBody(text: string): ParsedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'parse_error' };
  }
  return Array.isArray(value) ? { kind: 'batch', calls: value } : { kind: 'single', call: value };
}

/** The `method` of a call, when it is a string. */
export function methodOf(call: unknown): string | undefined {
  return isRecord(call) && typeof call.method === 'string' ? call.method : undefined;
}

/** The call's id as JSON text: `null` when unreadable, undefined for a notification. */
export function idJsonOf(call: unknown): string | undefined {
  if (!isRecord(call)) return 'null';
  if (!('id' in call)) return undefined;
  const id = call.id;
  if (typeof id === 'string' || typeof id === 'number' || id === null) return JSON.stringify(id);
  return 'null';
}

function isValidId(call: Record<string, unknown>): boolean {
  const id = call.id;
  return !('id' in call) || id === null || typeof id === 'string' || typeof id === 'number';
}

/** Answers parsed bodies from a method table. */
export class RpcResponder {
  readonly #methods: MethodTable;
  readonly #ctx: MethodContext;

  constructor(ctx: MethodContext, methods: MethodTable = MOCK_METHODS) {
    this.#methods = methods;
    this.#ctx = ctx;
  }

  /** The body for `parsed`; '' when nothing is owed (notifications only). */
  answer(parsed: ParsedBody, responseBytes: number): ResponseBody {
    if (parsed.kind === 'parse_error') {
      return errorJson(RPC_ERROR.parseError, ERROR_MESSAGE.parseError, 'null');
    }
    if (parsed.kind === 'single') return this.#answerCall(parsed.call, responseBytes) ?? '';
    if (parsed.calls.length === 0) {
      return errorJson(RPC_ERROR.invalidRequest, ERROR_MESSAGE.invalidRequest, 'null');
    }
    const share = responseBytes > 0 ? Math.ceil(responseBytes / parsed.calls.length) : 0;
    const parts: Array<string | Buffer> = [];
    for (const call of parsed.calls) {
      const answer = this.#answerCall(call, share);
      if (answer === undefined) continue;
      parts.push(parts.length === 0 ? '[' : ',');
      if (typeof answer === 'string') parts.push(answer);
      else parts.push(...answer);
    }
    if (parts.length === 0) return '';
    parts.push(']');
    return parts.every((part) => typeof part === 'string') ? parts.join('') : parts;
  }

  /** One call's answer; undefined for a valid notification. */
  #answerCall(call: unknown, responseBytes: number): ResponseBody | undefined {
    if (!isRecord(call) || typeof call.method !== 'string' || !isValidId(call)) {
      return errorJson(
        RPC_ERROR.invalidRequest,
        ERROR_MESSAGE.invalidRequest,
        idJsonOf(call) ?? 'null',
      );
    }
    const idJson = idJsonOf(call);
    if (idJson === undefined) return undefined;
    const spec = this.#methods.get(call.method);
    if (!spec) return errorJson(METHOD_NOT_FOUND, 'Method not found', idJson);
    try {
      if (responseBytes > 0)
        return this.#padded(call.method, spec, call.params, idJson, responseBytes);
      return `${RESULT_HEAD}${spec.result(call.params, this.#ctx)},"id":${idJson}}`;
    } catch (err) {
      if (err instanceof InvalidParamsError) return errorJson(INVALID_PARAMS, err.message, idJson);
      return errorJson(INTERNAL_ERROR, 'Internal error', idJson);
    }
  }

  #padded(
    method: string,
    spec: MethodSpec,
    params: unknown,
    idJson: string,
    responseBytes: number,
  ): ResponseBody {
    // Built (and cached) for the size alone; the id's length only changes the whitespace.
    const size = responseBytes - ENVELOPE_BYTES;
    const target = size - idJson.length;
    const result =
      paddedResult(method, spec, size, params, this.#ctx) ?? spec.result(params, this.#ctx);
    const length = typeof result === 'string' ? Buffer.byteLength(result) : result.length;
    return [RESULT_HEAD, result, whitespace(target - length), `,"id":${idJson}}`];
  }
}
