/**
 * eth_getLogs elements of a batch (issue 29), whichever door the batch came by: while a range
 * limit is known (logs-split.ts `logsLimited`), each is served alone through the single-request
 * path — as hedged reads and writes of a batch are — so its range is judged, refused or split
 * exactly as the same request sent alone; its answer goes back into the array at its place.
 * The other elements travel as before.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import { LOGS_METHOD_ID } from '../protocol/logs-range.js';
import type { BatchElement, RpcRequest } from '../protocol/rpc-request.js';
import { NOTHING_ROUTED, type BatchResult } from '../routing/batch-route.js';
import { elementJson } from '../routing/route-answer.js';
import type { RouteResult } from '../routing/route-context.js';
import type { CallBudget } from './key-gate.js';
import { logsLimited, serveLogs, type ServeOpen } from './logs-split.js';
import type { ServingContext } from './serving-context.js';

type ServeOpenBatch = (
  batch: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: ServingContext,
) => Promise<BatchResult>;

/** The eth_getLogs elements (with an id) served alone, when some range limit is known. */
export function logsElements(batch: readonly BatchElement[], ctx: ServingContext): number[] {
  const alone: number[] = [];
  batch.forEach((element, index) => {
    if (element.methodId === LOGS_METHOD_ID && element.idJson !== undefined) alone.push(index);
  });
  return alone.length === 0 || !logsLimited(ctx) ? [] : alone;
}

function requestOf(element: BatchElement): RpcRequest {
  const raw = element.raw;
  const body =
    raw === undefined
      ? Buffer.from(JSON.stringify(element.value), 'utf8')
      : raw.source.subarray(raw.span.start, raw.span.end);
  return { body, method: element.method!, methodId: element.methodId, batch: undefined };
}

function servedAlone(
  element: BatchElement,
  headers: ForwardHeaders,
  ctx: ServingContext,
  budget: CallBudget | undefined,
  serveOpen: ServeOpen,
): Promise<RouteResult> {
  return new Promise((resolve) =>
    serveLogs(
      requestOf(element),
      headers,
      ctx,
      (result: RouteResult) => resolve(result),
      undefined,
      budget,
      serveOpen,
    ),
  );
}

/**
 * Serves `batch` with its elements at `alone` served one by one (serveLogs) and the rest as one
 * batch (`serveOpenBatch`); the answers keep the batch's order.
 */
export async function serveBatchWithLogs(
  batch: readonly BatchElement[],
  alone: readonly number[],
  headers: ForwardHeaders,
  ctx: ServingContext,
  budgetOf: ((element: BatchElement) => CallBudget | undefined) | undefined,
  serveOpen: ServeOpen,
  serveOpenBatch: ServeOpenBatch,
): Promise<BatchResult> {
  const rest = batch.flatMap((_element, index) => (alone.includes(index) ? [] : [index]));
  const [inner, results] = await Promise.all([
    rest.length === 0
      ? NOTHING_ROUTED
      : serveOpenBatch(
          rest.map((i) => batch[i]!),
          headers,
          ctx,
        ),
    Promise.all(
      alone.map((i) => servedAlone(batch[i]!, headers, ctx, budgetOf?.(batch[i]!), serveOpen)),
    ),
  ]);
  const texts = new Array<string | undefined>(batch.length);
  rest.forEach((index, j) => (texts[index] = inner.texts[j]));
  let { attempts, credits, forwarded } = inner;
  const nodes = [...inner.nodes];
  alone.forEach((index, j) => {
    const result = results[j]!;
    texts[index] = elementJson(result, batch[index]!.idJson!);
    attempts += result.attempts;
    credits += result.credits;
    if (result.kind !== 'answer') return;
    forwarded = true;
    for (const node of result.node.split(',')) if (!nodes.includes(node)) nodes.push(node);
  });
  const parts = batch.flatMap((element, i) => (element.idJson === undefined ? [] : [texts[i]!]));
  return {
    body: parts.length === 0 ? '' : `[${parts.join(',')}]`,
    forwarded,
    timedOut: inner.timedOut,
    attempts,
    credits,
    nodes,
    answers: [],
    texts,
  };
}
