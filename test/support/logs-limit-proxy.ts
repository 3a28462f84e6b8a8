/**
 * A provider in front of a real EVM node (anvil) for the eth_getLogs tests (issue 29): every
 * call is forwarded to the node, except an eth_getLogs over more blocks (or returning more
 * logs) than the provider's limit, which is answered with that provider's own error shape
 * (src/mock/logs-limit-errors.ts). It records every eth_getLogs range it is asked, so a test
 * can see chunks, refusals and repeats; `failOnce` makes one range fail the way a node that
 * lacks data does. Closed by `closeUpstreams`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  limitsBlocks,
  logsLimitError,
  type LogsLimitShape,
  type MockRpcError,
} from '../../src/mock/index.js';
import { startUpstream } from './upstreams.js';

/** One inclusive block range. */
export type Range = readonly [number, number];

/** The provider's limit and how it words it. */
export interface LogsRule {
  readonly shape: LogsLimitShape;
  /** Blocks per query (range shapes) or logs per answer (result shapes). */
  readonly limit: number;
}

export interface LogsLimitProxy {
  readonly url: string;
  /** Every eth_getLogs range asked, in arrival order. */
  readonly asked: Range[];
  /** The ranges answered with logs. */
  readonly served: Range[];
  /** The ranges refused with the limit error. */
  readonly refused: Range[];
  /** Calls of `method` received (batch elements one by one). */
  count(method: string): number;
  /** The next eth_getLogs over exactly `range` is answered with `error` instead. */
  failOnce(range: Range, error: MockRpcError): void;
  /** Forgets what was recorded. */
  reset(): void;
}

interface Call {
  readonly id?: unknown;
  readonly method: string;
  readonly params?: unknown[];
}

async function forward(upstream: string, call: Call): Promise<Record<string, unknown>> {
  const response = await fetch(upstream, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', ...call }),
  });
  return (await response.json()) as Record<string, unknown>;
}

async function blockOf(upstream: string, value: unknown): Promise<number> {
  if (typeof value === 'string' && value.startsWith('0x')) return Number.parseInt(value, 16);
  if (value === 'earliest') return 0;
  const head = await forward(upstream, { id: 0, method: 'eth_blockNumber', params: [] });
  return Number.parseInt(head.result as string, 16);
}

/** Starts one provider in front of `upstream`; `rule` undefined: no limit. */
export async function startLogsLimitProxy(
  upstream: string,
  rule: LogsRule | undefined,
): Promise<LogsLimitProxy> {
  const asked: Range[] = [];
  const served: Range[] = [];
  const refused: Range[] = [];
  const methods: string[] = [];
  const failures: Array<{ range: Range; error: MockRpcError }> = [];

  async function answer(call: Call): Promise<{ status: number; body: Record<string, unknown> }> {
    methods.push(call.method);
    if (call.method !== 'eth_getLogs') return { status: 200, body: await forward(upstream, call) };
    const filter = (call.params?.[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown };
    const range: Range = [
      await blockOf(upstream, filter.fromBlock),
      await blockOf(upstream, filter.toBlock),
    ];
    asked.push(range);
    const failing = failures.findIndex((f) => f.range[0] === range[0] && f.range[1] === range[1]);
    if (failing !== -1) return errorAnswer(call, failures.splice(failing, 1)[0]!.error);
    const span = range[1] - range[0] + 1;
    if (rule !== undefined && limitsBlocks(rule.shape) && span > rule.limit) {
      refused.push(range);
      return errorAnswer(
        call,
        logsLimitError(rule.shape, { limit: rule.limit, from: range[0], to: range[1] }),
      );
    }
    const body = await forward(upstream, call);
    const logs = body.result as Array<{ blockNumber: string }> | undefined;
    if (rule !== undefined && !limitsBlocks(rule.shape) && (logs?.length ?? 0) > rule.limit) {
      refused.push(range);
      // The range that holds `limit` logs from the start, as Infura suggests it.
      const last = Number.parseInt(logs![rule.limit - 1]!.blockNumber, 16);
      const fits: Range = [range[0], Math.max(range[0], last - 1)];
      const facts = { limit: rule.limit, from: range[0], to: range[1], fits };
      return errorAnswer(call, logsLimitError(rule.shape, facts));
    }
    served.push(range);
    return { status: 200, body };
  }

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      Promise.all(calls.map(answer)).then(
        (answers) => {
          const status = Array.isArray(parsed) ? 200 : answers[0]!.status;
          const body = Array.isArray(parsed) ? answers.map((a) => a.body) : answers[0]!.body;
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        },
        (err: unknown) => {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(String(err));
        },
      );
    });
  };
  const url = await startUpstream(handler);
  return {
    url,
    asked,
    served,
    refused,
    count: (method) => methods.filter((m) => m === method).length,
    failOnce: (range, error) => failures.push({ range, error }),
    reset() {
      for (const list of [asked, served, refused, methods]) list.splice(0);
    },
  };
}

function errorAnswer(
  call: Call,
  error: MockRpcError,
): { status: number; body: Record<string, unknown> } {
  const { status, code, message, data } = error;
  return {
    status: status ?? 200,
    body: {
      jsonrpc: '2.0',
      id: call.id ?? null,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    },
  };
}
