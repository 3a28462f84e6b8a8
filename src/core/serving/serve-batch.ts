/**
 * Batches through the response cache, element by element, whichever door they came in by: an element with a stored answer is
 * answered in place, one identical to a request in flight waits for it, and the rest travel
 * through the batch router as one (smaller) batch. Led elements land their answers in the cache
 * for their waiters; waiters whose leader got no shareable answer are routed afterwards with
 * what is left of the batch's budget.
 */
import {
  withClientId,
  type FlightWaiter,
  type SharedAnswer,
  type Flight,
} from '../cache/flight.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import { NOTHING_ROUTED, routeBatch, type BatchResult } from '../routing/batch-route.js';
import { unansweredJson } from '../routing/route-answer.js';
import type { CallBudget, KeyedCaller } from './key-gate.js';
import { logsElements, serveBatchWithLogs } from './logs-batch.js';
import { serveKeyedBatch, type ServedBatch } from './serve-keyed-batch.js';
import { serveOpen } from './serve-request.js';
import { bookSaved, type ServingContext } from './serving-context.js';

/** A batch element waiting on an identical request in flight. */
class ElementWaiter implements FlightWaiter {
  readonly answer: Promise<SharedAnswer | undefined>;
  #resolve!: (answer: SharedAnswer | undefined) => void;

  constructor() {
    this.answer = new Promise((resolve) => (this.#resolve = resolve));
  }

  landed(answer: SharedAnswer | undefined): void {
    this.#resolve(answer);
  }
}

/** How the cache met each element of one batch. */
class BatchPlan {
  /** Final text per element answered without routing (hit or shared). */
  readonly texts: (string | undefined)[];
  readonly routed: number[] = [];
  readonly leads = new Map<number, Flight>();
  readonly waits = new Map<number, ElementWaiter>();
  fromCache = 0;

  constructor(size: number) {
    this.texts = new Array<string | undefined>(size);
  }
}

function plan(
  batch: readonly BatchElement[],
  cache: ResponseCache,
  ctx: ServingContext,
): BatchPlan {
  const result = new BatchPlan(batch.length);
  const now = ctx.route.clock.now();
  batch.forEach((element, index) => {
    const policy = element.method === undefined ? undefined : cache.policyOf(element.method);
    const raw = element.raw;
    if (policy === undefined || element.idJson === undefined || raw === undefined) {
      if (policy !== undefined) cache.bypass(policy);
      result.routed.push(index);
      return;
    }
    const found = cache.lookup(policy, raw.source, raw.span, now);
    if (found === undefined) {
      result.routed.push(index);
    } else if (found.kind === 'hit') {
      result.texts[index] = withClientId(found.answer, element.idJson).toString('utf8');
      result.fromCache++;
      bookSaved(ctx, element.methodId);
    } else if (found.kind === 'wait') {
      const waiter = new ElementWaiter();
      found.flight.waiters.push(waiter);
      result.waits.set(index, waiter);
    } else {
      result.leads.set(index, found.flight);
      result.routed.push(index);
    }
  });
  return result;
}

/** Routes `indexes` of `batch` as one batch; lands led elements' answers (even on a throw). */
async function routeSome(
  batch: readonly BatchElement[],
  indexes: readonly number[],
  headers: ForwardHeaders,
  ctx: ServingContext,
  budgetMs: number,
  cache: ResponseCache,
  leads: ReadonlyMap<number, Flight>,
): Promise<BatchResult> {
  let result: BatchResult = NOTHING_ROUTED;
  try {
    if (indexes.length > 0) {
      const routeCtx = budgetMs === ctx.route.budgetMs ? ctx.route : { ...ctx.route, budgetMs };
      result = await routeBatch(
        indexes.map((i) => batch[i]!),
        headers,
        routeCtx,
      );
    }
  } finally {
    const now = ctx.route.clock.now();
    indexes.forEach((index, j) => {
      const flight = leads.get(index);
      if (flight === undefined) return;
      const answer = result.answers[j];
      const body = answer === undefined ? undefined : Buffer.from(answer, 'utf8');
      cache.land(flight, body === undefined ? 0 : 200, 'application/json', body, now);
    });
  }
  return result;
}

/**
 * Serves a batch through the key check (a keyed caller's: serve-keyed-batch.ts) and the cache;
 * the answer array keeps the elements' order.
 */
export function serveBatch(
  batch: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: ServingContext,
  caller?: KeyedCaller,
): Promise<ServedBatch> {
  if (caller === undefined) return serveOpenBatch(batch, headers, ctx);
  return serveKeyedBatch(batch, headers, ctx, caller, serveOpenBatch);
}

/**
 * A batch past the key check: eth_getLogs elements alone while a range limit is known
 * (logs-batch.ts), the rest through the cache and the batch router. `budgetOf` gives a keyed
 * element's budget (a planned split reserves its whole cost).
 */
function serveOpenBatch(
  batch: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: ServingContext,
  budgetOf?: (element: BatchElement) => CallBudget | undefined,
): Promise<BatchResult> {
  const alone = logsElements(batch, ctx);
  if (alone.length === 0) return serveCachedBatch(batch, headers, ctx);
  return serveBatchWithLogs(batch, alone, headers, ctx, budgetOf, serveOpen, serveCachedBatch);
}

async function serveCachedBatch(
  batch: readonly BatchElement[],
  headers: ForwardHeaders,
  ctx: ServingContext,
): Promise<BatchResult> {
  const cache = ctx.cache;
  if (cache === undefined) return routeBatch(batch, headers, ctx.route);
  const deadline = ctx.route.clock.now() + ctx.route.budgetMs;
  const p = plan(batch, cache, ctx);
  if (p.routed.length === batch.length && p.leads.size === 0) {
    return routeBatch(batch, headers, ctx.route);
  }
  const first = await routeSome(batch, p.routed, headers, ctx, ctx.route.budgetMs, cache, p.leads);
  const texts = p.texts;
  p.routed.forEach((index, j) => (texts[index] = first.texts[j]));
  const again: number[] = [];
  for (const [index, waiter] of p.waits) {
    const answer = await waiter.answer;
    if (answer === undefined) {
      again.push(index);
      continue;
    }
    texts[index] = withClientId(answer, batch[index]!.idJson!).toString('utf8');
    p.fromCache++;
    bookSaved(ctx, batch[index]!.methodId);
  }
  let second = NOTHING_ROUTED;
  let timedOut = first.timedOut;
  if (again.length > 0) {
    const left = deadline - ctx.route.clock.now();
    if (left > 0) second = await routeSome(batch, again, headers, ctx, left, cache, new Map());
    timedOut ||= left <= 0 || second.timedOut;
    again.forEach((index, j) => {
      texts[index] = second.texts[j] ?? unansweredJson(timedOut, batch[index]!.idJson!);
    });
  }
  const parts = batch.flatMap((element, i) => (element.idJson === undefined ? [] : [texts[i]!]));
  const nodes = [
    ...new Set([...first.nodes, ...second.nodes, ...(p.fromCache > 0 ? ['cache'] : [])]),
  ];
  return {
    body: parts.length === 0 ? '' : `[${parts.join(',')}]`,
    forwarded: first.forwarded || second.forwarded || p.fromCache > 0,
    timedOut,
    attempts: first.attempts + second.attempts,
    credits: first.credits + second.credits,
    nodes,
    answers: [],
    texts,
  };
}
