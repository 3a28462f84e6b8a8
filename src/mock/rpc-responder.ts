/**
 * JSON-RPC 2.0 semantics of a mock node: parse a body once, answer single calls and batches,
 * echo ids byte for byte, and the standard -32700/-32600/-32601/-32602 errors. Calls of a
 * method with a configured error get that error; handlers answer node errors (a resubmitted
 * transaction) by throwing NodeErrorAnswer.
 *
 * Notifications (no `id` member) get nothing: geth writes no answer for them (rpc/handler.go,
 * handleNonBatchCall and handleBatch) and agave's jsonrpc-core drops them (io.rs,
 * outputs_as_batch), so a body of notifications only is answered 200 with an empty body by both
 * (jsonrpc-http-server's test should_return_empty_response_for_notification).
 */
import { checkMinContextSlot } from './min-context-slot.js';
import { ERROR_MESSAGE, RPC_ERROR, errorJson } from '../core/protocol/index.js';
import { batchIdJsons, isPlainText, singleIdJson } from './call-ids.js';
import { EVM_METHOD_SPECS } from './evm-methods.js';
import {
  InvalidParamsError,
  isRecord,
  type MethodContext,
  type MethodSpec,
  type MethodTable,
} from './method-spec.js';
import {
  NodeErrorAnswer,
  errorAnswerJson,
  prepareError,
  type PreparedError,
} from './node-errors.js';
import { paddedResult, whitespace } from './padding.js';
import { SOLANA_METHOD_SPECS } from './solana-methods.js';

/** A request body read once, with each call's id as the client wrote it (see call-ids.ts). */
export type ParsedBody =
  | { readonly kind: 'parse_error' }
  | { readonly kind: 'single'; readonly call: unknown; readonly idJson: string | undefined }
  | {
      readonly kind: 'batch';
      readonly calls: readonly unknown[];
      readonly idJsons: ReadonlyArray<string | undefined>;
    };

/** What a responder reports about the calls it answers (the node's stats). */
export interface AnswerTally {
  notification(): void;
  error(method: string): void;
}

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
export function parseBody(body: Buffer | string): ParsedBody {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'parse_error' };
  }
  const plain = isPlainText(text);
  if (Array.isArray(value)) {
    return { kind: 'batch', calls: value, idJsons: batchIdJsons(value, bytes, plain) };
  }
  return { kind: 'single', call: value, idJson: singleIdJson(value, bytes, plain) };
}

/** The `method` of a call, when it is a string. */
export function methodOf(call: unknown): string | undefined {
  return isRecord(call) && typeof call.method === 'string' ? call.method : undefined;
}

function isValidId(call: Record<string, unknown>): boolean {
  const id = call.id;
  return !('id' in call) || id === null || typeof id === 'string' || typeof id === 'number';
}

/** Answers parsed bodies from a method table. */
export class RpcResponder {
  readonly #methods: MethodTable;
  readonly #ctx: MethodContext;
  readonly #tally: AnswerTally | undefined;
  /** Method → the error every call of it gets, ready to write (replaced on setBehaviour). */
  methodErrors: ReadonlyMap<string, PreparedError> = new Map();

  constructor(ctx: MethodContext, methods: MethodTable = MOCK_METHODS, tally?: AnswerTally) {
    this.#methods = methods;
    this.#ctx = ctx;
    this.#tally = tally;
  }

  /** The body for `parsed`; '' when nothing is owed (notifications only). */
  answer(parsed: ParsedBody, responseBytes: number): ResponseBody {
    if (parsed.kind === 'parse_error') {
      return errorJson(RPC_ERROR.parseError, ERROR_MESSAGE.parseError, 'null');
    }
    if (parsed.kind === 'single') {
      return this.#answerCall(parsed.call, parsed.idJson, responseBytes) ?? '';
    }
    if (parsed.calls.length === 0) {
      return errorJson(RPC_ERROR.invalidRequest, ERROR_MESSAGE.invalidRequest, 'null');
    }
    const share = responseBytes > 0 ? Math.ceil(responseBytes / parsed.calls.length) : 0;
    const parts: Array<string | Buffer> = [];
    for (let i = 0; i < parsed.calls.length; i++) {
      const answer = this.#answerCall(parsed.calls[i], parsed.idJsons[i], share);
      if (answer === undefined) continue;
      parts.push(parts.length === 0 ? '[' : ',');
      if (typeof answer === 'string') parts.push(answer);
      else parts.push(...answer);
    }
    if (parts.length === 0) return '';
    parts.push(']');
    return parts.every((part) => typeof part === 'string') ? parts.join('') : parts;
  }

  /** The method error a single call gets (its HTTP status and headers apply to the answer). */
  singleMethodError(parsed: ParsedBody): PreparedError | undefined {
    if (parsed.kind !== 'single' || this.methodErrors.size === 0) return undefined;
    const method = methodOf(parsed.call);
    return method === undefined ? undefined : this.methodErrors.get(method);
  }

  /** One call's answer; undefined for a valid notification. */
  #answerCall(
    call: unknown,
    idJson: string | undefined,
    responseBytes: number,
  ): ResponseBody | undefined {
    if (!isRecord(call) || typeof call.method !== 'string' || !isValidId(call)) {
      return errorJson(RPC_ERROR.invalidRequest, ERROR_MESSAGE.invalidRequest, idJson ?? 'null');
    }
    if (idJson === undefined) {
      this.#tally?.notification();
      return undefined;
    }
    const method = call.method;
    const methodError = this.methodErrors.get(method);
    if (methodError) return this.#error(method, methodError.objectJson, idJson);
    const spec = this.#methods.get(method);
    if (!spec) return this.#error(method, errorJson(METHOD_NOT_FOUND, 'Method not found', idJson));
    try {
      checkMinContextSlot(call.params, this.#ctx);
      if (responseBytes > 0) return this.#padded(method, spec, call.params, idJson, responseBytes);
      return `${RESULT_HEAD}${spec.result(call.params, this.#ctx)},"id":${idJson}}`;
    } catch (err) {
      if (err instanceof NodeErrorAnswer) {
        return this.#error(method, prepareError(err.error).objectJson, idJson);
      }
      if (err instanceof InvalidParamsError) {
        return this.#error(method, errorJson(INVALID_PARAMS, err.message, idJson));
      }
      return this.#error(method, errorJson(INTERNAL_ERROR, 'Internal error', idJson));
    }
  }

  /** Counts an error answer; with `idJson`, `body` is an error object to wrap. */
  #error(method: string, body: string, idJson?: string): string {
    this.#tally?.error(method);
    return idJson === undefined ? body : errorAnswerJson(body, idJson);
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
