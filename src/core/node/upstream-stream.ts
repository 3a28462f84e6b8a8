/**
 * The rest of a large upstream answer, relayed to the client as it arrives instead of being
 * buffered. Backpressure flows both ways: a slow client pauses the upstream socket, and a
 * client that goes away aborts the upstream request. A body that stops arriving for
 * STREAM_IDLE_MS is cut off.
 */
import type { Writable } from 'node:stream';

/** How a stream steers the upstream request it relays (the transport implements it). */
export interface UpstreamControl {
  pause(): void;
  resume(): void;
  abort(reason: Error): void;
}

/** A streamed body may pause this long between upstream chunks before it is abandoned. */
export const STREAM_IDLE_MS = 5_000;
/** A client that reads nothing for this long while the stream waits on it is cut off. */
export const CLIENT_STALL_MS = 60_000;

/**
 * How a stream ended: relayed whole; broken by the upstream (its body broke or stalled: the
 * node's fault); or given up on the client's side (it left, or stopped reading).
 */
export type StreamEnd = 'relayed' | 'upstream_broke' | 'client_gone';

export class UpstreamStream {
  readonly head: Buffer;
  readonly #controller: UpstreamControl;
  #sink: Writable | undefined;
  readonly #pending: Buffer[] = [];
  #state: 'open' | 'ended' | 'failed' = 'open';
  #finished = false;
  #end: StreamEnd = 'relayed';
  readonly #onFinish: Array<(end: StreamEnd) => void> = [];
  #idle: NodeJS.Timeout | undefined;
  /** True while the upstream is paused because the client is not reading. */
  #waitingForClient = false;
  /** How long (ms, in idle periods) the client has kept the stream waiting. */
  #clientStall = 0;

  constructor(controller: UpstreamControl, head: Buffer) {
    this.#controller = controller;
    this.head = head;
    this.#idle = setTimeout(() => this.#onIdle(), STREAM_IDLE_MS);
  }

  /** True when the upstream body broke (or the relay was aborted). */
  get failed(): boolean {
    return this.#state === 'failed';
  }

  /** Registers `callback(end)` for when the stream is over (relayed whole, or not). */
  onFinish(callback: (end: StreamEnd) => void): void {
    if (this.#finished) callback(this.#end);
    else this.#onFinish.push(callback);
  }

  /**
   * Starts relaying to `res`: the client's response (status and headers already written by
   * the caller), or a transform in front of it (gzip).
   */
  pipeTo(res: Writable): void {
    this.#sink = res;
    if (res.destroyed || res.closed) {
      // The client left while the answer was on its way: free the upstream and the permit now.
      this.abort(new Error('client went away'));
      return;
    }
    res.on('close', () => {
      if (!res.writableFinished) this.abort(new Error('client went away'));
    });
    res.on('drain', () => {
      this.#waitingForClient = false;
      this.#clientStall = 0;
      this.#idle?.refresh();
      this.#controller.resume();
    });
    this.#write(this.head);
    for (const chunk of this.#pending.splice(0)) this.#write(chunk);
    if (this.#state === 'ended') this.#ended();
    else if (this.#state === 'failed') res.destroy();
  }

  /** Called by the transport for each chunk after the head. */
  push(chunk: Buffer): void {
    this.#idle?.refresh();
    if (this.#sink) this.#write(chunk);
    else this.#pending.push(chunk);
  }

  /** Called by the transport when the upstream body is complete. */
  end(): void {
    if (this.#state !== 'open') return;
    this.#state = 'ended';
    if (this.#sink) this.#ended();
  }

  /** Called when the upstream body broke: the client gets a cut-off response. */
  fail(reason: Error): void {
    this.#breakOff(reason, 'upstream_broke');
  }

  /** Stops relaying and aborts the upstream request (the client is gone). */
  abort(reason: Error): void {
    this.#breakOff(reason, 'client_gone');
  }

  #breakOff(reason: Error, end: StreamEnd): void {
    if (this.#state !== 'open') return;
    this.#state = 'failed';
    this.#end = end;
    this.#controller.abort(reason);
    this.#sink?.destroy();
    this.#finish();
  }

  #write(chunk: Buffer): void {
    if (this.#sink && !this.#sink.write(chunk)) {
      this.#waitingForClient = true;
      this.#controller.pause();
    }
  }

  /** No upstream data for a while: fine if we paused it for a slow client, up to a point. */
  #onIdle(): void {
    if (!this.#waitingForClient) {
      this.fail(new Error('upstream body stalled'));
    } else if (this.#clientStall >= CLIENT_STALL_MS) {
      this.abort(new Error('client stopped reading'));
    } else {
      this.#clientStall += STREAM_IDLE_MS;
      this.#idle?.refresh();
    }
  }

  #ended(): void {
    this.#sink?.end();
    this.#finish();
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#idle);
    this.#idle = undefined;
    for (const callback of this.#onFinish.splice(0)) callback(this.#end);
  }
}
