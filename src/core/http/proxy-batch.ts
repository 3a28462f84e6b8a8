/**
 * A JSON-RPC batch through the proxy: elements are routed (through the cache) in groups per
 * node and answered as one array; per-element errors travel inside it, so the HTTP answer is
 * 200 unless the batch itself is refused.
 */
import { RequestOutcome } from '../metrics.js';
import { RPC_ERROR } from '../protocol/error-body.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import { logAccess } from './access-log.js';
import { routeBatchCached } from './cached-batch.js';
import { sendAnswer } from './compression.js';
import {
  finish,
  forwardHeaders,
  lastOnConnection,
  reject,
  setRoutingHeaders,
  type ExchangeState,
} from './exchange-record.js';

/** Routes and answers a parsed batch, recording it once. */
export async function proxyBatch(
  batch: readonly BatchElement[],
  exchange: ExchangeState,
): Promise<void> {
  const { req, res, ctx } = exchange;
  ctx.metrics.batchSize(batch.length);
  if (batch.length > ctx.maxBatchSize) {
    const message = `Batch of ${batch.length} requests exceeds the limit of ${ctx.maxBatchSize} (server.max_batch_size)`;
    reject(exchange, {
      status: 400,
      code: RPC_ERROR.invalidRequest,
      message,
      idJson: 'null',
    });
    return;
  }
  const result = await routeBatchCached(batch, forwardHeaders(req), ctx);
  lastOnConnection(exchange);
  if (ctx.routingHeaders)
    setRoutingHeaders(res, result.nodes.join(','), result.attempts, result.credits);
  if (result.body === '') {
    // Only notifications: nothing is owed (JSON-RPC 2.0 §6), so no body at all.
    res.writeHead(204).end();
  } else {
    // Per-element errors travel inside the array, so the HTTP answer is 200 either way.
    sendAnswer(req, res, 200, 'application/json', result.body, ctx.compressionMinBytes);
  }
  // A batch of nothing but invalid elements is the client's mistake, not an upstream failure.
  const outcome = result.forwarded
    ? RequestOutcome.forwarded
    : batch.every((element) => element.method === undefined)
      ? RequestOutcome.badRequest
      : result.timedOut
        ? RequestOutcome.timeout
        : RequestOutcome.badGateway;
  const seconds = finish(exchange, outcome);
  if (ctx.accessLog) {
    const fields = {
      method: `batch[${batch.length}]`,
      nodes: result.nodes,
      attempts: result.attempts,
      credits: result.credits,
    };
    logAccess(ctx, exchange.req, fields, outcome, seconds);
  }
}
