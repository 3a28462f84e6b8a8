/**
 * Which requests fail (first N, or a seeded fraction) and how a failure goes on the wire.
 * Between them the fault kinds produce every row of the proxy's answer classification:
 * transport errors (close, stall), body errors (truncate, stall_body), final and non-final
 * HTTP statuses (http), unparseable answers (invalid_json, empty, 204) and JSON-RPC errors.
 */
import type { ServerResponse } from 'node:http';
import { seedOf, seededRandom } from './encoding.js';
import { errorAnswerJson, errorObjectJson } from './node-errors.js';
import type { MockBehaviour, MockFault } from './types.js';

const RPC_MESSAGES: Readonly<Record<number, string>> = {
  [-32700]: 'Parse error',
  [-32600]: 'Invalid Request',
  [-32601]: 'Method not found',
  [-32602]: 'Invalid params',
  [-32603]: 'Internal error',
  [-32005]: 'Request limit exceeded',
  [-32000]: 'Server error',
};
/** What a misbehaving gateway in front of a node typically sends. */
const NOT_JSON =
  'upstream connect error or disconnect/reset before headers. reset reason: overflow';
/** The answer stall_body and truncate start to send (and never finish). */
const PARTIAL_ANSWER = `{"jsonrpc":"2.0","result":"${'A'.repeat(4000)}","id":null}`;
const PARTIAL_SENT = 1024;

/** Picks the requests that get the fault. Deterministic: a seeded PRNG per node. */
export class FaultPicker {
  readonly #random: () => number;
  #firstLeft = 0;

  constructor(seed: string) {
    this.#random = seededRandom(seedOf(seed));
  }

  /** Restarts the failFirst count (when the fault or failFirst changes). */
  restart(failFirst: number): void {
    this.#firstLeft = failFirst;
  }

  /** True when this request gets `behaviour.fault`. */
  pick(behaviour: MockBehaviour): boolean {
    if (behaviour.fault.kind === 'none') return false;
    if (behaviour.failFirst > 0) {
      if (this.#firstLeft <= 0) return false;
      this.#firstLeft--;
      return true;
    }
    if (behaviour.failureRate >= 1) return true;
    return behaviour.failureRate > 0 && this.#random() < behaviour.failureRate;
  }
}

function contentTypeOf(body: string): string {
  const first = body.trimStart()[0];
  return first === '{' || first === '[' ? 'application/json' : 'text/plain; charset=utf-8';
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType: string,
  extra?: Record<string, string>,
): void {
  const bodyless = status === 204 || status === 304;
  res.writeHead(status, {
    'content-type': contentType,
    ...(bodyless ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
    ...extra,
  });
  res.end(bodyless ? undefined : body);
}

/** Sends headers and the first bytes of an answer; `thenDestroy` cuts the connection after. */
function sendPartial(res: ServerResponse, status: number, thenDestroy: boolean): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(PARTIAL_ANSWER.length),
  });
  res.write(PARTIAL_ANSWER.slice(0, PARTIAL_SENT), () => {
    if (thenDestroy) res.socket?.destroy();
  });
}

/** Answers (or deliberately does not answer) with `fault`; `idJson` (exact JSON text) is echoed by rpc_error. */
export function writeFault(res: ServerResponse, fault: MockFault, idJson: string): void {
  switch (fault.kind) {
    case 'http': {
      const body = fault.body ?? '';
      send(res, fault.status, body, fault.contentType ?? contentTypeOf(body), fault.headers);
      return;
    }
    case 'rpc_error': {
      const message = fault.message ?? RPC_MESSAGES[fault.code] ?? 'Server error';
      const error = errorObjectJson({ code: fault.code, message, data: fault.data });
      send(res, fault.status ?? 200, errorAnswerJson(error, idJson), 'application/json');
      return;
    }
    case 'invalid_json':
      send(res, fault.status ?? 200, NOT_JSON, 'text/plain; charset=utf-8');
      return;
    case 'empty':
      send(res, fault.status ?? 200, '', 'application/json');
      return;
    case 'stall_body':
      sendPartial(res, fault.status ?? 200, false);
      return;
    case 'truncate':
      sendPartial(res, fault.status ?? 200, true);
      return;
    case 'close':
      res.socket?.destroy();
      return;
    case 'stall':
    case 'none':
      return;
  }
}
