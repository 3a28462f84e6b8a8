/**
 * The two pure halves of sending part of a JSON-RPC batch to one node: building the upstream
 * body, and reading the node's answer back into per-element results.
 *
 * Elements keep their own ids towards the client, but travel upstream under the ids 0..n-1 of
 * their sub-batch, so duplicate or odd client ids can never be confused. A sub-batch of one
 * element travels as a plain request (some providers refuse batches) and is classified exactly
 * like a single request. A larger one must come back as an array with an answer for every id;
 * an element whose answer is missing is retried on another node while the rest of the
 * sub-batch is done. An element's JSON-RPC error is judged by the same table as a single
 * request's: the request's own errors are its answer, others leave it open for another node
 * (the error is kept, to relay if no node does better). A well-formed sub-batch answered with
 * one -32700/-32600 object is a node that does not take batches (we sent valid JSON): nobody's
 * failure, the elements go again one per attempt.
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
import {
  INVALID_JSON,
  SUCCESS,
  classifyAnswer,
  errorFieldsOf,
  errorVerdict,
  parseAnswer,
  type Verdict,
} from './classify.js';
import { failureJson, notJsonRpc } from './route-answer.js';

/** One element's progress through a batch request. */
export interface ElementProgress {
  readonly element: BatchElement;
  /** Final JSON text to return for it (with the client's id); undefined while unserved. */
  answer: string | undefined;
  /** Set once the element needs nothing more (answered, or a notification sent). */
  done: boolean;
  /**
   * Set by the last attempt when it left the element open with an upstream JSON-RPC error: the
   * error's verdict, its agreement key and its text with the client's id.
   */
  error?: { readonly verdict: Verdict; readonly key: string; readonly text: string } | undefined;
}

/** A node that answered a well-formed batch with one -32700/-32600 object: it takes no batches. */
export const REFUSED_BATCH: Verdict = Object.freeze({
  kind: 'retry',
  penalty: 'never',
  outcome: AttemptOutcome.retryableRpcError,
  relayable: false,
});
const NODE_HTTP_ERROR: Verdict = Object.freeze({
  kind: 'final',
  penalty: 'now',
  outcome: AttemptOutcome.forwardedHttpError,
  relayable: false,
});

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

/**
 * One answer object re-labelled with the client's id text (byte for byte where its id can be
 * cut), or undefined when the bytes are not one JSON object: how an answer that does not carry
 * the client's id (an upstream's JSON error page, `"id":null` on a call it refused) travels
 * where only the id ties it to its request — a batch element, a socket message.
 */
export function answerWithClientId(body: Buffer, idJson: string): string | undefined {
  const raw = rawWithClientId(body, trimmedSpan(body), idJson);
  if (raw !== undefined) return raw;
  const parsed = parseAnswer(body);
  return isObject(parsed) ? withClientId(parsed, idJson) : undefined;
}

/** The verdict of one answer object, and its error's agreement key when it has one. */
function elementVerdict(
  answer: Record<string, unknown>,
): { verdict: Verdict; key: string } | undefined {
  const fields = errorFieldsOf(answer);
  if (fields === 'none') return undefined;
  if (fields === 'invalid') return { verdict: INVALID_JSON, key: '' };
  return { verdict: errorVerdict(fields), key: `${fields.code} ${fields.message}` };
}

/** Orders verdicts by what they cost the node: a failure outranks an error, an error a success. */
function worse(a: Verdict, b: Verdict): Verdict {
  const rank = (v: Verdict): number =>
    v.kind !== 'retry' ? 0 : v.penalty === 'now' ? 3 : v.penalty === 'disputed' ? 2 : 1;
  return rank(b) > rank(a) ? b : a;
}

function readSingle(status: number, body: Buffer, progress: ElementProgress): Verdict {
  progress.error = undefined;
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
  if (result.kind === 'retry') {
    if (result.relayable) keepError(progress, result, body, idJson);
    return result;
  }
  const parsed = parseAnswer(body);
  if (!isObject(parsed)) {
    if (result.kind === 'success') return INVALID_JSON;
    // A final answer that is not JSON-RPC (a 4xx HTML page): the wording route-answer.ts has.
    progress.answer = failureJson(notJsonRpc(status), idJson);
  } else {
    progress.answer =
      rawWithClientId(body, trimmedSpan(body), idJson) ?? withClientId(parsed, idJson);
    if (progress.answer === undefined) return INVALID_JSON;
  }
  progress.done = true;
  return result;
}

/** Keeps a single element's relayable error answer, relabelled with the client's id. */
function keepError(
  progress: ElementProgress,
  verdict: Verdict,
  body: Buffer,
  idJson: string,
): void {
  const parsed = parseAnswer(body);
  if (!isObject(parsed)) return;
  const text = rawWithClientId(body, trimmedSpan(body), idJson) ?? withClientId(parsed, idJson);
  const fields = errorFieldsOf(parsed);
  if (text === undefined || typeof fields === 'string') return;
  progress.error = { verdict, key: `${fields.code} ${fields.message}`, text };
}

/** True for one -32700/-32600 error object: what a node that takes no batches answers. */
function isBatchRefusal(parsed: unknown): boolean {
  if (!isObject(parsed)) return false;
  const fields = errorFieldsOf(parsed);
  return typeof fields !== 'string' && (fields.code === -32700 || fields.code === -32600);
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
  const parsed = parseAnswer(body);
  // The bytes we sent were valid JSON-RPC (cut from a parsed batch): a single parse or
  // invalid-request error is the node refusing batches, not the client's mistake.
  if (isBatchRefusal(parsed)) return REFUSED_BATCH;
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
  let open: Verdict | undefined;
  elements.forEach((progress, index) => {
    progress.error = undefined;
    const idJson = progress.element.idJson;
    if (idJson === undefined) {
      progress.done = status >= 200 && status < 300;
      return;
    }
    const answer = answers.get(index);
    if (answer === undefined) {
      missing = true;
      return;
    }
    const text =
      rawWithClientId(body, spansById.get(index), idJson) ?? withClientId(answer, idJson);
    if (text === undefined) {
      missing = true;
      return;
    }
    const error = elementVerdict(answer);
    if (error !== undefined && error.verdict.kind === 'retry') {
      open = open === undefined ? error.verdict : worse(open, error.verdict);
      if (error.verdict.relayable)
        progress.error = { verdict: error.verdict, key: error.key, text };
      return;
    }
    progress.answer = text;
    progress.done = true;
  });
  if (missing) return INVALID_JSON;
  if (open !== undefined) return open;
  return status >= 200 && status < 300 ? SUCCESS : NODE_HTTP_ERROR;
}
