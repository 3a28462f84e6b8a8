/**
 * The HTTP side of a mock node: routes, body reading, latency, fault selection and writing
 * the answer. Kept lean because a mock must outrun the proxy it feeds: a zero-delay answer is
 * written synchronously in the body's `end` handler, with no timer in between.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultPicker } from './faults.js';
import { writeFault } from './faults.js';
import type { MockMempool } from './mempool.js';
import type { PreparedError } from './node-errors.js';
import type { RpcResponder } from './rpc-responder.js';
import { methodOf, parseBody, type ParsedBody, type ResponseBody } from './rpc-responder.js';
import type { StatsCounter } from './stats-counter.js';
import type { MockBehaviour, MockFault } from './types.js';

/** What the handler reads and updates; owned by the node. */
export interface NodeState {
  behaviour: MockBehaviour;
  readonly picker: FaultPicker;
  readonly stats: StatsCounter;
  readonly responder: RpcResponder;
  readonly mempool: MockMempool;
}

/** Bodies above this get 413 (a mock has no reason to buffer more). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const HEALTH_BODY = '{"status":"up"}';
const TOO_LARGE_BODY =
  '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Request too large"},"id":null}';

/** Writes a body of known length with keep-alive intact. */
export function writeBody(res: ServerResponse, status: number, body: ResponseBody): void {
  if (typeof body === 'string') {
    res.writeHead(status, [
      'content-type',
      'application/json',
      'content-length',
      String(Buffer.byteLength(body)),
    ]);
    res.end(body);
    return;
  }
  let length = 0;
  for (const part of body)
    length += typeof part === 'string' ? Buffer.byteLength(part) : part.length;
  res.writeHead(status, ['content-type', 'application/json', 'content-length', String(length)]);
  for (const part of body) res.write(part);
  res.end();
}

function countMethods(stats: StatsCounter, parsed: ParsedBody): void {
  if (parsed.kind === 'parse_error') return;
  const calls = parsed.kind === 'single' ? [parsed.call] : parsed.calls;
  for (const call of calls) {
    const method = methodOf(call);
    if (method !== undefined) stats.count(method);
  }
}

function faultIdJson(parsed: ParsedBody): string {
  return parsed.kind === 'single' ? (parsed.idJson ?? 'null') : 'null';
}

/** An answer worked out on arrival, written after the node's delay. */
interface Reply {
  readonly body: ResponseBody;
  /** A single call's method error, whose status and headers apply (a provider's 429). */
  readonly methodError: PreparedError | undefined;
}

function replyTo(state: NodeState, parsed: ParsedBody, responseBytes: number): Reply {
  const body = state.responder.answer(parsed, responseBytes);
  return { body, methodError: body === '' ? undefined : state.responder.singleMethodError(parsed) };
}

function send(
  res: ServerResponse,
  parsed: ParsedBody,
  fault: MockFault | undefined,
  reply: Reply | undefined,
): void {
  // The client may have gone while the answer was delayed.
  if (res.destroyed || res.headersSent) return;
  if (fault) return writeFault(res, fault, faultIdJson(parsed));
  if (reply === undefined) return;
  const { body, methodError } = reply;
  if (methodError === undefined) return writeBody(res, 200, body);
  for (const [name, value] of Object.entries(methodError.headers ?? {})) res.setHeader(name, value);
  writeBody(res, methodError.status, body);
}

function handleBody(state: NodeState, res: ServerResponse, body: Buffer): void {
  const parsed = parseBody(body);
  countMethods(state.stats, parsed);
  const behaviour = state.behaviour;
  const fault = state.picker.pick(behaviour) ? behaviour.fault : undefined;
  if (fault) state.stats.faults++;
  // Calls run on arrival and their answer waits out the delay, so a slow node has already
  // accepted a transaction when its answer comes late (or after the client gave up).
  const reply = fault ? undefined : replyTo(state, parsed, behaviour.responseBytes);
  const delay =
    behaviour.jitterMs > 0
      ? behaviour.delayMs + Math.random() * behaviour.jitterMs
      : behaviour.delayMs;
  if (delay > 0) setTimeout(send, delay, res, parsed, fault, reply);
  else send(res, parsed, fault, reply);
}

function readBody(state: NodeState, req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return writeBody(res, 413, TOO_LARGE_BODY);
    handleBody(state, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
  });
}

function serveInfo(
  state: NodeState,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET', 'content-length': '0' }).end();
    return;
  }
  writeBody(res, 200, path === '/health' ? HEALTH_BODY : JSON.stringify(state.stats.snapshot()));
}

/** The `request` listener of a node's HTTP(S) server. */
export function createRequestHandler(
  state: NodeState,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (path === '/health' || path === '/__stats') return serveInfo(state, req, res, path);
    if (req.method !== 'POST') {
      const status = path === '/' ? 405 : 404;
      res.writeHead(status, { allow: 'POST', 'content-length': '0' }).end();
      return;
    }
    state.stats.begin();
    res.on('close', state.stats.end);
    readBody(state, req, res);
  };
}
