/**
 * Writes inside a batch (ethers, for one, batches `eth_sendRawTransaction` with
 * `eth_blockNumber`). Each write element is routed on its own through the single-request write
 * driver — never resent blindly, "already known" answered with its hash or signature,
 * broadcast when configured — while the batch's reads take the batch path; its answer goes
 * back into the batch array at its place, with the client's id.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { BatchElement, RpcRequest } from '../protocol/rpc-request.js';
import { elementJson } from './route-answer.js';
import type { RouteContext } from './route-context.js';
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
            answer: idJson === undefined ? undefined : elementJson(result, idJson),
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
