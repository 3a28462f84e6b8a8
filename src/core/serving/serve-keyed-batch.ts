/**
 * A batch from a keyed caller: every element passes the key check on its own (key-gate.ts), as
 * the same call sent alone would; refused elements are answered in place with their refusal,
 * the rest are served as one smaller batch (cache, coalescing, the batch router). A batch over
 * the key's `max_batch_size` is refused whole. The key is settled once, with what the served
 * elements cost.
 */
import type { ForwardHeaders } from '../node/attempt-response.js';
import { errorJson } from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import { batchRefused, type KeyRefusal } from '../keys/key-refusal.js';
import { NOTHING_ROUTED, type BatchResult } from '../routing/batch-route.js';
import { admitCall, type KeyedCaller } from './key-gate.js';
import type { ServingContext } from './serving-context.js';

/** A served batch, and the refusal that stands for it when no element was served. */
export interface ServedBatch extends BatchResult {
  /** Set when every element was refused (or the batch as a whole): the first refusal. */
  readonly refused?: KeyRefusal | undefined;
  /** The batch was refused as a whole (too big for the key): answer one error, not an array. */
  readonly refusedWhole?: boolean;
}

type ServeOpen = (
  batch: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: ServingContext,
) => Promise<BatchResult>;

function paramsOf(element: BatchElement): () => unknown {
  return () => (element.value as { params?: unknown } | null)?.params;
}

/** Serves `batch` for `caller`: checked element by element, then `serveOpen` for the rest. */
export async function serveKeyedBatch(
  batch: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: ServingContext,
  caller: KeyedCaller,
  serveOpen: ServeOpen,
): Promise<ServedBatch> {
  const key = caller.key;
  const most = key.config.maxBatchSize;
  if (most !== undefined && batch.length > most) {
    key.count('batch_size');
    const refused = batchRefused(key.name, batch.length, most);
    return { ...NOTHING_ROUTED, refused, refusedWhole: true };
  }
  const texts: (string | undefined)[] = new Array<string | undefined>(batch.length);
  const served: number[] = [];
  let reserved = 0;
  let firstRefusal: KeyRefusal | undefined;
  batch.forEach((element, index) => {
    // An element that is not a request is the batch router's to answer (-32600), at no cost.
    if (element.method === undefined) return served.push(index);
    const admitted = admitCall(caller, element.method, element.methodId, paramsOf(element), ctx);
    if (typeof admitted === 'number') {
      reserved += admitted;
      served.push(index);
      return;
    }
    firstRefusal ??= admitted;
    if (element.idJson !== undefined)
      texts[index] = errorJson(admitted.code, admitted.message, element.idJson);
  });
  const admittedCount = served.filter((i) => batch[i]!.method !== undefined).length;
  let inner = NOTHING_ROUTED;
  try {
    if (served.length > 0)
      inner = await serveOpen(
        served.map((i) => batch[i]!),
        headers,
        ctx,
      );
  } finally {
    key.settleMany(admittedCount, reserved, inner.credits);
  }
  served.forEach((index, j) => (texts[index] = inner.texts[j]));
  const parts = batch.flatMap((element, i) =>
    element.idJson === undefined || texts[i] === undefined ? [] : [texts[i]],
  );
  return {
    ...inner,
    body: parts.length === 0 ? '' : `[${parts.join(',')}]`,
    texts,
    answers: [],
    refused: served.length === 0 ? firstRefusal : undefined,
  };
}
