/**
 * The two pure halves of sending part of a JSON-RPC batch to one node: building the upstream
 * body, and reading the node's answer back into per-element results.
 *
 * Elements keep their own ids towards the client, but travel upstream under the ids 0..n-1 of
 * their sub-batch, so duplicate or odd client ids can never be confused. A sub-batch of one
 * element travels as a plain request (some providers refuse batches) and is classified exactly
 * like a single request. A larger one must come back as an array with an answer for every id;
 * an element whose answer is missing, or that carries a server-side JSON-RPC error, is retried
 * on another node while the rest of the sub-batch is done.
 */
import { AttemptOutcome } from '../metrics.js';
import {
  arrayElementSpans,
  memberValueSpan,
  spliceSpan,
  trimmedSpan,
  type Span,
} from '../protocol/json-spans.js';
import type { BatchElement } from '../protocol/rpc-request.js';
import { classifyAnswer, type Verdict } from './classify.js';

/** One element's progress through a batch request. */
export interface ElementProgress {
  readonly element: BatchElement;
  /** Final JSON text to return for it (with the client's id); undefined while unserved. */
  answer: string | undefined;
  /** Set once the element needs nothing more (answered, or a notification sent). */
  done: boolean;
}

const verdict = (kind: Verdict['kind'], penalize: boolean, outcome: number): Verdict => ({
  kind,
  penalize,
  outcome,
});
const SUCCESS = verdict('success', false, AttemptOutcome.success);
const INVALID = verdict('retry', true, AttemptOutcome.invalidJson);
const RETRYABLE = verdict('retry', true, AttemptOutcome.retryableRpcError);
const NODE_HTTP_ERROR = verdict('final', true, AttemptOutcome.forwardedHttpError);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The element as it travels upstream: its own bytes with the id replaced by its index (a
 * notification verbatim). Re-serialised only when its bytes could not be located.
 */
function upstreamBytes(element: BatchElement, index: number): Buffer {
  const raw = element.raw;
  if (raw !== undefined) {
    if (raw.idSpan === null) return raw.source.subarray(raw.span.start, raw.span.end);
    return spliceSpan(raw.source, raw.span, raw.idSpan, String(index));
  }
  if (element.idJson === undefined) return Buffer.from(JSON.stringify(element.value));
  return Buffer.from(JSON.stringify({ ...(element.value as Record<string, unknown>), id: index }));
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** The upstream body for `elements` (a plain request for one, an array for several). */
export function subBatchBody(elements: readonly ElementProgress[]): Buffer {
  if (elements.length === 1) return upstreamBytes(elements[0]!.element, 0);
  const parts: Buffer[] = [OPEN];
  elements.forEach((p, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(upstreamBytes(p.element, i));
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/**
 * An answer object's own bytes with its id replaced by the client's id text: what the node
 * said, byte for byte (large numbers included). Undefined when the bytes cannot be cut.
 */
function rawWithClientId(body: Buffer, span: Span | undefined, idJson: string): string | undefined {
  if (span === undefined) return undefined;
  const idSpan = memberValueSpan(body, span, 'id');
  if (idSpan === undefined || idSpan === null) return undefined;
  return spliceSpan(body, span, idSpan, idJson).toString('utf8');
}

/** An answer object re-labelled with the client's id. */
function withClientId(answer: Record<string, unknown>, idJson: string): string | undefined {
  // The client's id goes back as the exact JSON text it was read as; undefined when the
  // answer cannot be serialised (e.g. nested deeper than JSON.stringify's stack allows).
  try {
    const { id: _id, ...rest } = answer;
    const text = JSON.stringify(rest);
    return text === '{}' ? `{"id":${idJson}}` : `${text.slice(0, -1)},"id":${idJson}}`;
  } catch {
    return undefined;
  }
}

/** True when an answer object carries a JSON-RPC error another node might not have. */
function isRetryableError(answer: Record<string, unknown>): boolean {
  const error = answer.error;
  if (error === undefined || error === null) return false;
  const code = isObject(error) ? error.code : undefined;
  if (typeof code !== 'number' || !Number.isInteger(code)) return true;
  return !(code === -32700 || code === -32600 || code === -32601 || code === -32602);
}

function parse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function readSingle(status: number, body: Buffer, progress: ElementProgress): Verdict {
  const idJson = progress.element.idJson;
  if (idJson === undefined) {
    // A notification expects no answer: a 2xx delivered it, whatever the body.
    if (status >= 200 && status < 300) {
      progress.done = true;
      return SUCCESS;
    }
    const failure = classifyAnswer(status, body, false);
    if (failure.kind !== 'retry') progress.done = true;
    return failure;
  }
  const result = classifyAnswer(status, body, false);
  if (result.kind === 'retry') return result;
  const parsed = parse(body);
  if (!isObject(parsed)) {
    if (result.kind === 'success') return INVALID;
    const error = { code: -32000, message: `Upstream answered HTTP ${status}` };
    progress.answer = withClientId({ jsonrpc: '2.0', error }, idJson);
  } else {
    progress.answer =
      rawWithClientId(body, trimmedSpan(body), idJson) ?? withClientId(parsed, idJson);
    if (progress.answer === undefined) return INVALID;
  }
  progress.done = true;
  return result;
}

/**
 * Reads a node's answer to a sub-batch into `elements` (marking each answered one done) and
 * returns the attempt's verdict: retry (and penalize) when any element must go elsewhere.
 */
export function readSubBatchAnswer(
  status: number,
  body: Buffer,
  elements: readonly ElementProgress[],
): Verdict {
  if (elements.length === 1) return readSingle(status, body, elements[0]!);
  const parsed = parse(body);
  const answers = new Map<number, Record<string, unknown>>();
  /** Where each answer's bytes are, by its sub-batch id. */
  const spansById = new Map<number, Span>();
  if (Array.isArray(parsed)) {
    const spans = arrayElementSpans(body);
    const aligned = spans !== undefined && spans.length === parsed.length;
    parsed.forEach((item: unknown, k) => {
      if (!isObject(item) || typeof item.id !== 'number') return;
      answers.set(item.id, item);
      if (aligned) spansById.set(item.id, spans[k]!);
    });
  }
  let missing =
    !Array.isArray(parsed) &&
    !(body.length === 0 && elements.every((p) => p.element.idJson === undefined));
  let retryable = false;
  elements.forEach((progress, index) => {
    const idJson = progress.element.idJson;
    if (idJson === undefined) {
      progress.done = status >= 200 && status < 300;
      return;
    }
    const answer = answers.get(index);
    if (answer === undefined) missing = true;
    else if (isRetryableError(answer)) retryable = true;
    else {
      progress.answer =
        rawWithClientId(body, spansById.get(index), idJson) ?? withClientId(answer, idJson);
      if (progress.answer === undefined) missing = true;
      else progress.done = true;
    }
  });
  if (missing) return INVALID;
  if (retryable) return RETRYABLE;
  return status >= 200 && status < 300 ? SUCCESS : NODE_HTTP_ERROR;
}
