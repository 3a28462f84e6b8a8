/**
 * Several attempts of one request in flight at once (a hedge, a broadcast write): they are
 * handed back one at a time in the order they settle, optionally with a timer racing the next.
 */
import type { Clock, ClockTimer } from '../clock.js';
import type { ForwardHeaders } from '../node/attempt-response.js';
import { sendAttempt, type Attempt, type AttemptOwner } from './attempt.js';

/** Attempts in flight for one request, read back as they settle. */
export class AttemptRace implements AttemptOwner {
  /** Every attempt sent, in sending order. */
  readonly sent: Attempt[] = [];
  #unread = 0;
  readonly #ready: Attempt[] = [];
  #wake: ((attempt: Attempt | undefined) => void) | undefined = undefined;

  constructor(
    readonly clock: Clock,
    readonly body: Buffer,
    readonly headers: ForwardHeaders,
    readonly allowStream: boolean,
  ) {}

  /** Sends an admitted attempt into the race. */
  send(attempt: Attempt): void {
    this.sent.push(attempt);
    this.#unread++;
    sendAttempt(attempt, this, this.body, this.headers, this.allowStream, this.clock.now());
  }

  /** Attempts sent and not yet read back by `next`. */
  get open(): number {
    return this.#unread;
  }

  /** @internal The transport settled `attempt`. */
  settled(attempt: Attempt): void {
    const wake = this.#wake;
    if (wake === undefined) {
      this.#ready.push(attempt);
      return;
    }
    this.#wake = undefined;
    this.#unread--;
    wake(attempt);
  }

  /**
   * The next attempt to settle; undefined when `waitMs` passes first. Only call it while
   * `open > 0`: every attempt settles (its deadline sees to that), so the wait always ends.
   */
  next(waitMs = Infinity): Promise<Attempt | undefined> {
    const ready = this.#ready.shift();
    if (ready !== undefined) {
      this.#unread--;
      return Promise.resolve(ready);
    }
    return new Promise((resolve) => {
      let timer: ClockTimer | undefined;
      this.#wake = (attempt) => {
        timer?.cancel();
        resolve(attempt);
      };
      if (waitMs !== Infinity) {
        timer = this.clock.setTimer(() => {
          this.#wake = undefined;
          resolve(undefined);
        }, waitMs);
      }
    });
  }

  /** Cancels every attempt still in flight but `keep`; returns how many it cancelled. */
  cancelOthers(keep: Attempt): number {
    let cancelled = 0;
    for (const attempt of this.sent) {
      if (attempt === keep) continue;
      if (attempt.state === 'admitted') cancelled++;
      attempt.cancel();
    }
    return cancelled;
  }
}
