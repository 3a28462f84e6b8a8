/**
 * Writes inside a batch (ethers, for one, batches `eth_sendRawTransaction` with
 * `eth_blockNumber`). Each write element is routed on its own through the single-request write
 * driver — never resent blindly, "already known" answered with its hash or signature,
 * broadcast when configured — while the batch's reads take the batch path; its answer goes
 * back into the batch array at its place, with the client's id.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import {
  ERROR_MESSAGE,
  RPC_ERROR,
  WRITE_UNCONFIRMED_MESSAGE,
  errorJson,
} from '../protocol/error-body.js';
import type { BatchElement, RpcRequest } from '../protocol/rpc-request.js';
import { jsonShape, JsonShape } from '../protocol/json-shape.js';
import type { RouteContext, RouteResult } from './route-context.js';
import { route } from './route.js';

/** One write element's outcome, as the batch records it. */
export interface WriteElementResult {
  /** Its answer text for the batch array; undefined for a notification. */
  readonly answer: string | undefined;
  /** A node answered it. */
  readonly forwarded: boolean;
  readonly node: string | undefined;
  readonly attempts: number;
  readonly credits: number;
}

function elementRequest(element: BatchElement): RpcRequest {
  const raw = element.raw;
  const body =
    raw === undefined
      ? Buffer.from(JSON.stringify(element.value), 'utf8')
      : raw.source.subarray(raw.span.start, raw.span.end);
  return { body, method: element.method!, methodId: element.methodId, batch: undefined };
}

/** The text an element's route result stands for inside a batch answer. */
function answerText(result: RouteResult, idJson: string): string {
  if (result.kind === 'failed') throw result.error;
  if (result.kind === 'answer') {
    const body = result.body;
    // A write's answer is never streamed; one that is not a JSON object cannot sit in the array.
    if (Buffer.isBuffer(body)) {
      const shape = jsonShape(body);
      const isObject =
        shape === JsonShape.object ||
        (shape === JsonShape.unsure && body.toString('utf8').trimStart().startsWith('{'));
      if (isObject) return body.toString('utf8');
    }
    return errorJson(RPC_ERROR.serverError, ERROR_MESSAGE.allFailed, idJson);
  }
  if (result.kind === 'timeout') {
    return errorJson(RPC_ERROR.serverError, ERROR_MESSAGE.globalTimeout, idJson);
  }
  const message = result.unsure === true ? WRITE_UNCONFIRMED_MESSAGE : ERROR_MESSAGE.allFailed;
  return errorJson(RPC_ERROR.serverError, message, idJson);
}

/**
 * Routes one element alone, as a single request (a write, or a hedged read: batch-route.ts);
 * resolves with its place in the batch. Its answer arrives whole, never streamed.
 */
export function routeWriteElement(
  element: BatchElement,
  headers: ForwardHeaders,
  ctx: RouteContext,
): Promise<WriteElementResult> {
  return new Promise((resolve, reject) => {
    route(
      elementRequest(element),
      headers,
      ctx,
      (result) => {
        try {
          const idJson = element.idJson;
          resolve({
            answer: idJson === undefined ? undefined : answerText(result, idJson),
            forwarded: result.kind === 'answer',
            node: result.kind === 'answer' ? result.node : undefined,
            attempts: result.attempts,
            credits: result.credits,
          });
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      },
      undefined,
      false,
    );
  });
}
