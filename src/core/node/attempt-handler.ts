/**
 * One attempt's handler for undici's `dispatch`: collects the answer (or hands a large one over
 * as a stream), enforces the attempt's deadline through the shared deadline queue, resends once
 * on a fresh connection when a reused one turns out closed, and settles exactly once.
 */
import type { Buffer } from 'node:buffer';
import type { Dispatcher } from 'undici';
import type { DeadlineQueue, Expiring } from './deadline-queue.js';
import { joinChunks } from './body-chunks.js';
import { isResultFirst } from './result-first.js';
import type { AttemptCallback, AttemptControl, AttemptResponse } from './attempt-response.js';
import { RawHeader } from './upstream-headers.js';
import { UpstreamStream, type UpstreamControl } from './upstream-stream.js';

/** Largest upstream answer buffered for one attempt. */
export const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;
/** Answers larger than this may be streamed instead of buffered. */
export const STREAM_THRESHOLD = 64 * 1024;

/** What a handler needs from its transport. */
export interface HandlerTransport {
  /** Where attempts' deadlines wait. */
  readonly deadlines: DeadlineQueue;
  /** Set once an answer came back: later attempts may run on reused connections. */
  answered: boolean;
  /** Sends `request` once more on a new connection of its own. */
  sendFresh(request: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void;
}

/** Connection failures that can mean "the upstream closed this idle connection as we sent". */
const DROPPED = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

const CONTENT_TYPE = new RawHeader('content-type');
const RETRY_AFTER = new RawHeader('retry-after');

function describe(err: Error): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  return e.cause?.code ?? e.code ?? e.message;
}

/**
 * One attempt's handler: collects the answer, enforces the deadline, settles exactly once.
 * It speaks undici's raw callback interface (status + raw header list, boolean backpressure)
 * rather than the controller interface, which undici adapts to this one by wrapping every
 * handler and parsing every header into an object — about 1 µs per attempt we do not need.
 */
export class AttemptHandler<T>
  implements Dispatcher.DispatchHandler, UpstreamControl, AttemptControl, Expiring
{
  deadline = 0;
  prevDue: Expiring | undefined = undefined;
  nextDue: Expiring | undefined = undefined;
  queued = false;
  #abort: ((reason?: Error) => void) | undefined;
  #resume: (() => void) | undefined;
  #paused = false;
  #settled = false;
  #timedOut = false;
  #status = 0;
  #headers: Buffer[] | undefined;
  /** The answer's first chunk, the rest after it (body-chunks.ts says why). */
  #first: Buffer | undefined = undefined;
  #more: Buffer[] | undefined = undefined;
  #size = 0;
  #stream: UpstreamStream | undefined;
  /** Whether the stream-or-buffer decision was taken (it is taken once). */
  #decided = false;
  /** Set once the attempt was resent on a fresh connection (it is resent at most once). */
  #resent = false;
  /** Set once the request was handed to a connection to be written. */
  #sent = false;

  constructor(
    private readonly transport: HandlerTransport,
    private readonly request: Dispatcher.DispatchOptions,
    private readonly done: AttemptCallback<T>,
    private readonly token: T,
    private readonly timeoutMs: number,
    private readonly allowStream: boolean,
    /** The transport had answered before: the pool may hand this attempt a reused connection. */
    private readonly mayReuse: boolean,
    /** The sender's clock reading, when it has a fresh one (saves reading the clock again). */
    now?: number,
  ) {
    transport.deadlines.add(this, timeoutMs, now);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
    // undici calls this just before it writes the request: aborting here means never sent.
    if (this.#settled) abort(new Error('attempt already given up'));
    else this.#sent = true;
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.#status = status;
    this.#headers = rawHeaders;
    this.#resume = resume;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#stream) {
      this.#stream.push(chunk);
      return !this.#paused;
    }
    if (this.#settled) return true;
    if (this.#first === undefined) this.#first = chunk;
    else if (this.#more === undefined) this.#more = [chunk];
    else this.#more.push(chunk);
    this.#size += chunk.length;
    if (this.#size > MAX_RESPONSE_BYTES) {
      this.abort(new Error('answer larger than 512 MiB'));
    } else if (!this.#decided && this.#size >= STREAM_THRESHOLD) {
      // Decide once: re-checking every later chunk would copy the body again each time.
      this.#decided = true;
      if (!this.allowStream || this.#status < 200 || this.#status >= 300) return true;
      const head = this.#body();
      if (isResultFirst(head)) this.#startStream(head);
    }
    return !this.#paused;
  }

  onComplete(): void {
    if (this.#stream) return this.#stream.end();
    this.#settle({
      kind: 'answer',
      status: this.#status,
      contentType: CONTENT_TYPE.read(this.#headers),
      // Only a 429 or 503 can ask for a pause (see retryAfterSeconds); skip the scan otherwise.
      retryAfter:
        this.#status === 429 || this.#status === 503 ? RETRY_AFTER.read(this.#headers) : undefined,
      body: this.#body(),
    });
  }

  onError(error: Error): void {
    if (this.#stream) return this.#stream.fail(error);
    if (this.#isStaleConnection(error)) {
      // The upstream closed an idle pooled connection as we sent on it: not the node's fault,
      // and nothing of an answer arrived, so the request is sent again on a new connection.
      this.#resent = true;
      this.#abort = undefined;
      this.transport.sendFresh(this.request, this);
      return;
    }
    const reason = this.#timedOut ? `no answer within ${this.timeoutMs} ms` : describe(error);
    const timedOut = this.#timedOut;
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut }
        : { kind: 'transport_error', reason, timedOut, sent: this.#sent },
    );
  }

  // UpstreamControl, for a streamed answer.
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#resume?.();
  }

  abort(reason: Error): void {
    this.#abort?.(reason);
  }

  #isStaleConnection(error: Error): boolean {
    if (this.#resent || !this.mayReuse || this.#settled || this.#headers !== undefined)
      return false;
    const code = (error as { code?: string }).code;
    return code !== undefined && DROPPED.has(code);
  }

  #body(): Buffer {
    const body = joinChunks(this.#first, this.#more, this.#size);
    if (this.#more !== undefined) {
      // Joined once: a second call (the stream decision, then the answer) copies nothing again.
      this.#first = body;
      this.#more = undefined;
    }
    return body;
  }

  #startStream(head: Buffer): void {
    this.#stream = new UpstreamStream(this, head);
    this.#first = undefined;
    this.#more = undefined;
    this.#settle({
      kind: 'stream',
      status: this.#status,
      contentType: CONTENT_TYPE.read(this.#headers),
      stream: this.#stream,
    });
  }

  cancel(): void {
    if (this.#settled) return;
    const reason = 'cancelled';
    this.#settle({ kind: 'transport_error', reason, timedOut: false, sent: this.#sent });
    this.#abort?.(new Error(reason));
  }

  /** The attempt's deadline passed (called by the deadline queue). */
  expire(): void {
    if (this.#settled) return;
    this.#timedOut = true;
    const reason = `no answer within ${this.timeoutMs} ms`;
    // Settle now even if the request is still queued for a socket; onConnect aborts it then.
    this.#settle(
      this.#headers
        ? { kind: 'body_error', reason, timedOut: true }
        : { kind: 'transport_error', reason, timedOut: true, sent: this.#sent },
    );
    this.#abort?.(new Error(reason));
  }

  #settle(response: AttemptResponse): void {
    if (this.#settled) return;
    this.#settled = true;
    this.transport.deadlines.remove(this);
    if (response.kind === 'answer' || response.kind === 'stream') this.transport.answered = true;
    this.done(response, this.token);
  }
}
