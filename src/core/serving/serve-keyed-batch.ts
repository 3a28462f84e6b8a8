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
import { answerTooLarge } from '../keys/heavy-read-refusal.js';
import type { KeyState } from '../keys/key-state.js';
import { admitCall, type CallBudget, type KeyedCaller } from './key-gate.js';
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
  budgetOf?: (element: BatchElement) => CallBudget | undefined,
) => Promise<BatchResult>;

function paramsOf(element: BatchElement): () => unknown {
  return () => (element.value as { params?: unknown } | null)?.params;
}

/** What each admitted element reserved, and what planned splits reserved beyond it. */
class ElementBudgets {
  readonly admitted = new Map<BatchElement, number>();
  extra = 0;

  constructor(readonly key: KeyState) {}

  /** The budget of an admitted element (a planned eth_getLogs split reserves through it). */
  of(element: BatchElement): CallBudget | undefined {
    const base = this.admitted.get(element);
    if (base === undefined) return undefined;
    let reserved = base;
    return {
      key: this.key,
      get reserved() {
        return reserved;
      },
      reserveUpTo: (credits) => {
        const more = credits - reserved;
        if (more <= 0) return true;
        if (!this.key.reserveMore(more)) return false;
        this.extra += more;
        reserved = credits;
        return true;
      },
    };
  }
}

/** An element's answer text, or its refusal when bigger than the key's `max_answer_bytes`. */
function capped(
  text: string | undefined,
  element: BatchElement,
  key: KeyState,
): string | undefined {
  const cap = key.config.maxAnswerBytes;
  if (cap === undefined || text === undefined || element.idJson === undefined) return text;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= cap) return text;
  const refusal = answerTooLarge(key.name, bytes, cap);
  return errorJson(refusal.code, refusal.message, element.idJson);
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
  const budgets = new ElementBudgets(key);
  let firstRefusal: KeyRefusal | undefined;
  batch.forEach((element, index) => {
    // An element that is not a request is the batch router's to answer (-32600), at no cost.
    if (element.method === undefined) return served.push(index);
    const admitted = admitCall(caller, element.method, element.methodId, paramsOf(element), ctx);
    if (typeof admitted === 'number') {
      reserved += admitted;
      budgets.admitted.set(element, admitted);
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
        (element) => budgets.of(element),
      );
  } finally {
    key.settleMany(admittedCount, reserved + budgets.extra, inner.credits);
  }
  served.forEach((index, j) => (texts[index] = capped(inner.texts[j], batch[index]!, key)));
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
