/**
 * A JSON-RPC batch through the proxy: elements are served (core/serving: the cache, then the
 * batch router) and answered as one array; per-element errors travel inside it, so the HTTP
 * answer is 200 (204 for only notifications) unless the batch itself is refused.
 */
import type { BatchElement } from '../protocol/rpc-request.js';
import { batchAnswerOf } from '../routing/route-answer.js';
import { batchTooLarge } from '../serving/refusal.js';
import { serveBatch } from '../serving/serve-batch.js';
import { logAccess } from './access-log.js';
import { setCreditsRemaining, setRefusalHeaders } from './key-caller.js';
import { sendAnswer } from './compression.js';
import {
  finish,
  forwardHeaders,
  lastOnConnection,
  reject,
  setRoutingHeaders,
  type ExchangeState,
} from './exchange-record.js';

/**
 * Counts a batch's size and refuses one over `[server] max_batch_size` (400, answered and
 * recorded): true when it did. Sized before the key check, as a WebSocket batch is, so a
 * keyless or wrong-key batch cannot make cascade write one refusal per element of any length.
 */
export function refuseOversizeBatch(
  batch: readonly BatchElement[],
  exchange: ExchangeState,
): boolean {
  const ctx = exchange.ctx;
  ctx.metrics.batchSize(batch.length);
  if (batch.length <= ctx.maxBatchSize) return false;
  reject(exchange, batchTooLarge(batch.length, ctx.maxBatchSize), 'null');
  return true;
}

/** Routes and answers a parsed batch (sized by refuseOversizeBatch), recording it once. */
export async function proxyBatch(
  batch: readonly BatchElement[],
  exchange: ExchangeState,
): Promise<void> {
  const { req, res, ctx } = exchange;
  const result = await serveBatch(batch, forwardHeaders(req), ctx, exchange.caller);
  const refused = result.refused;
  if (refused !== undefined) setRefusalHeaders(res, refused);
  if (refused !== undefined && result.refusedWhole === true) {
    return reject(exchange, refused, 'null');
  }
  lastOnConnection(exchange);
  if (ctx.creditsRemainingHeader) setCreditsRemaining(res, exchange.caller);
  if (ctx.routingHeaders)
    setRoutingHeaders(res, result.nodes.join(','), result.attempts, result.credits);
  const answer = batchAnswerOf(result, batch);
  // Every element refused by its key: the batch answers with the refusal's status (401/403/429).
  const status = refused === undefined || answer.status === 204 ? answer.status : refused.status;
  const body = answer.body;
  const outcome = refused === undefined ? answer.outcome : refused.outcome;
  if (status === 204) res.writeHead(204).end();
  else sendAnswer(req, res, status, 'application/json', body, ctx.compressionMinBytes);
  const seconds = finish(exchange, outcome);
  if (ctx.accessLog) {
    const fields = {
      method: `batch[${batch.length}]`,
      ...(exchange.caller ? { key: exchange.caller.key.name } : {}),
      nodes: result.nodes,
      attempts: result.attempts,
      credits: result.credits,
    };
    logAccess(ctx, exchange.req, fields, outcome, seconds);
  }
}
