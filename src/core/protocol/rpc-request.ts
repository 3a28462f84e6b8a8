import { isUtf8 } from 'node:buffer';
import { arrayElementSpans, memberValueSpan, trimmedSpan, type Span } from './json-spans.js';
import { scanMethod, scanned as methodScan } from './method-scan.js';
import type { MethodRegistry } from './method-registry.js';
import { methodMemberOf, packedOpen } from './answer-scan.js';
import {
  REQUEST_SCAN_BYTES,
  SCAN_ASK_ONLY,
  SCAN_METHOD,
  nameAt,
  requestScan,
  scanRequest,
} from './request-scan.js';

/** One element of a JSON-RPC batch, as routing and pricing see it. */
export interface BatchElement {
  /** Method name, or undefined when the element is not a valid request object. */
  readonly method: string | undefined;
  readonly methodId: number;
  /**
   * The element's `id` as JSON text — the client's own bytes whenever the scan found them
   * (re-serialised only when it could not); `null` for a non-scalar id; undefined for a
   * notification.
   */
  readonly idJson: string | undefined;
  /** The element itself (for re-serialising sub-batches). */
  readonly value: unknown;
  /**
   * Where the element's bytes sit in the client's body, and its `id` value among them (null:
   * no id), so sub-batches are cut from the original bytes — numbers beyond 2^53 and the
   * client's spelling survive. Absent when the scan could not tell (re-serialise instead).
   */
  readonly raw?: RawElement | undefined;
}

/** An element's place in the client's bytes. */
export interface RawElement {
  readonly source: Buffer;
  readonly span: Span;
  readonly idSpan: Span | null;
}

/**
 * A request parsed once. `body` holds the client's bytes, forwarded verbatim for a single
 * request; nothing downstream parses them again.
 */
export interface RpcRequest {
  readonly body: Buffer;
  /** Single-request method (the first element's for a batch). */
  readonly method: string;
  readonly methodId: number;
  /** Present when the body is a JSON array. */
  readonly batch: readonly BatchElement[] | undefined;
  /**
   * A single request's `id` as the client wrote it (JSON text), NO_ID for a notification;
   * undefined until read (only failures and empty answers need it: see requestIdOf).
   */
  idText?: string | typeof NO_ID;
  /**
   * What the request asks of a node's head (request-ask.ts, packed): read by the method scan's
   * walk of a small body, else on first use and kept here (chain/read-heads.ts).
   */
  headAsk?: number | undefined;
}

/** `idText` of a request without an `id` member: a notification (JSON-RPC 2.0 §4.1). */
export const NO_ID = Symbol('no id');

/** Why a body could not be routed. */
export type RequestProblem = 'parse_error' | 'invalid_request' | 'empty_batch';

export type ParseResult =
  | { readonly ok: true; readonly request: RpcRequest }
  | { readonly ok: false; readonly problem: RequestProblem; readonly idJson: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function idJsonOf(value: Record<string, unknown>): string | undefined {
  if (!('id' in value)) return undefined;
  const id = value.id;
  if (typeof id === 'string' || typeof id === 'number' || id === null) return JSON.stringify(id);
  return 'null';
}

/**
 * JSON.parse accepts nesting deeper than JSON.stringify can write back; an element that cannot
 * be re-serialised for its sub-batch is treated as an invalid request, not a crash.
 */
function isSerialisable(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `id` at `span` in `source` as the client wrote it: the exact bytes of a string, a number
 * or null — read from the bytes, so an integer beyond 2^53, a number JSON.parse makes Infinity
 * (309 digits and more), `1.50` or an escaped string survive — and `null` for any other value
 * (object, array, boolean), which is not a JSON-RPC id.
 */
function idTextAt(source: Buffer, span: Span): string {
  const first = source[span.start];
  const isId =
    first === 0x22 || first === 0x2d || first === 0x6e || (first! >= 0x30 && first! <= 0x39);
  return isId ? source.toString('utf8', span.start, span.end) : 'null';
}

function toElement(
  value: unknown,
  registry: MethodRegistry,
  source: Buffer,
  span: Span | undefined,
): BatchElement {
  if (!isPlainObject(value)) return { method: undefined, methodId: -1, idJson: 'null', value };
  const idSpan = span === undefined ? undefined : memberValueSpan(source, span, 'id');
  if (typeof value.method !== 'string' || !isSerialisable(value)) {
    // Answered -32600 in place: the id echoed as written (routing.md §1), like a single request.
    const idJson = idSpan === undefined ? idJsonOf(value) : idSpan && idTextAt(source, idSpan);
    return { method: undefined, methodId: -1, idJson: idJson ?? 'null', value };
  }
  const method = value.method;
  if (span === undefined || idSpan === undefined) {
    return { method, methodId: registry.idOf(method), idJson: idJsonOf(value), value };
  }
  // The id goes back to the client as the exact text it sent (when it is a scalar).
  const idJson = idSpan === null ? undefined : idTextAt(source, idSpan);
  const raw: RawElement = { source, span, idSpan };
  return { method, methodId: registry.idOf(method), idJson, value, raw };
}

/** methodMemberOf's closing quote (the low 16 bits). */
const CLOSE_QUOTE_MASK = 0xffff;

/**
 * Reads a request body: the wasm scans first (request-scan.ts for a leading method, the
 * answer scan's validator for an object with other members first), the JavaScript path
 * (parseRequestInJs) when they are unsure. Never throws; bad bodies come back as a problem with
 * the id to echo (`null` if unreadable).
 */
export function parseRequest(body: Buffer, registry: MethodRegistry): ParseResult {
  const method = body.length <= REQUEST_SCAN_BYTES ? scannedMethod(body) : undefined;
  if (method !== undefined) {
    const methodId = registry.idOf(method);
    const headAsk = requestScan.headAsk;
    return { ok: true, request: { body, method, methodId, batch: undefined, headAsk } };
  }
  return parseRequestInJs(body, registry);
}

/**
 * The method of a small body as the wasm scans read it (the head ask then in `requestScan`),
 * or undefined when they are unsure.
 */
function scannedMethod(body: Buffer): string | undefined {
  const scanned = scanRequest(body);
  // All ASCII (valid UTF-8 by that) with a leading plain method: one wasm call.
  if (scanned === SCAN_METHOD) return requestScan.method;
  if (scanned !== SCAN_ASK_ONLY) return undefined;
  // Another member first (`{"jsonrpc":"2.0","id":1,"method":…}`): the wasm validator reads it
  // as JSON.parse would, without building the objects.
  const quotes = methodMemberOf(body);
  return quotes < 0 ? undefined : nameAt(body, packedOpen(quotes), quotes & CLOSE_QUOTE_MASK);
}

/**
 * parseRequest for a body the wasm scans are not sure of (and the reference they are held
 * to): the leading method scan, else JSON.parse.
 */
export function parseRequestInJs(body: Buffer, registry: MethodRegistry): ParseResult {
  // JSON text is UTF-8 (RFC 8259 §8.1): anything else is refused before a node sees it.
  if (!isUtf8(body)) return { ok: false, problem: 'parse_error', idJson: 'null' };
  const scanned = scanMethod(body);
  if (scanned !== undefined) {
    const methodId = registry.idOf(scanned);
    const headAsk = methodScan.headAsk;
    return { ok: true, request: { body, method: scanned, methodId, batch: undefined, headAsk } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, problem: 'parse_error', idJson: 'null' };
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) return { ok: false, problem: 'empty_batch', idJson: 'null' };
    const spans = arrayElementSpans(body);
    const aligned = spans !== undefined && spans.length === parsed.length;
    const batch = parsed.map((value, i) =>
      toElement(value, registry, body, aligned ? spans[i] : undefined),
    );
    const first = batch[0]!;
    return {
      ok: true,
      request: { body, method: first.method ?? '', methodId: first.methodId, batch },
    };
  }
  if (!isPlainObject(parsed) || typeof parsed.method !== 'string') {
    // The id as written: JSON.parse would round an integer beyond 2^53 (…890 → …000).
    const idText = isPlainObject(parsed) ? readIdText(body) : NO_ID;
    return { ok: false, problem: 'parse_error', idJson: idText === NO_ID ? 'null' : idText };
  }
  const method = parsed.method;
  const request = {
    body,
    method,
    methodId: registry.idOf(method),
    batch: undefined,
    headAsk: undefined,
  };
  return { ok: true, request };
}

/**
 * A single request's `id` as the client wrote it: the exact bytes for a number or string (an
 * integer beyond 2^53 survives), `null` when the id is not a valid JSON-RPC id or the body has
 * none readable, NO_ID when the request has no `id` member. Read lazily (only failures and
 * empty answers need it) and kept on the request.
 */
export function requestIdOf(request: RpcRequest): string | typeof NO_ID {
  if (request.idText === undefined) request.idText = readIdText(request.body);
  return request.idText;
}

/** True when the request is a notification (no `id` member): it expects no answer. */
export function isNotification(request: RpcRequest): boolean {
  return requestIdOf(request) === NO_ID;
}

/** The `id` to echo in an error answer for `request` (`null` when it has none). */
export function readIdJson(request: RpcRequest): string {
  const id = requestIdOf(request);
  return id === NO_ID ? 'null' : id;
}

function readIdText(body: Buffer): string | typeof NO_ID {
  const span = memberValueSpan(body, trimmedSpan(body), 'id');
  if (span === null) return NO_ID;
  if (span !== undefined) return idTextAt(body, span);
  // The byte scan could not decide (an escaped or repeated key): ask the parser.
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (!isPlainObject(parsed)) return 'null';
    return idJsonOf(parsed) ?? NO_ID;
  } catch {
    return 'null';
  }
}
