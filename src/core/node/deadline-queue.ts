/**
 * Deadlines for in-flight attempts without a Node timer per attempt. Attempts arrive in
 * roughly deadline order (start time + a fixed timeout), so they sit in a list sorted by
 * deadline, inserted from the tail and unlinked in O(1) when they settle. One timer, armed
 * for the earliest deadline and left armed when that attempt settles early, expires whatever
 * is due when it fires. A Node timer per attempt would cost an allocation, a timer-list
 * insertion and removal, and at low load a fresh list and libuv re-arm for every request.
 */
import type { Clock, ClockTimer } from '../clock.js';

/**
 * An item with a deadline; the list links live on the item itself (no node allocation). An
 * interface, not a base class: an attempt's handler is one, and Node 20's V8 does not inline a
 * derived class's `super()` call. Start the fields at 0, undefined, undefined, false.
 */
export interface Expiring {
  /** When the item expires, on the queue's clock (ms). */
  deadline: number;
  prevDue: Expiring | undefined;
  nextDue: Expiring | undefined;
  queued: boolean;

  /** Called once when the deadline passes while the item is still queued. */
  expire(): void;
}

export class DeadlineQueue {
  #head: Expiring | undefined = undefined;
  #tail: Expiring | undefined = undefined;
  #timer: ClockTimer | undefined = undefined;
  /** The deadline the timer is armed for (Infinity when it is not armed). */
  #armedFor = Infinity;

  constructor(private readonly clock: Clock) {}

  /** Queues `item` to expire `timeoutMs` from now (`now`: the caller's fresh clock reading). */
  add(item: Expiring, timeoutMs: number, now: number = this.clock.now()): void {
    const deadline = now + timeoutMs;
    item.deadline = deadline;
    item.queued = true;
    let after = this.#tail;
    while (after !== undefined && after.deadline > deadline) after = after.prevDue;
    item.prevDue = after;
    item.nextDue = after === undefined ? this.#head : after.nextDue;
    if (item.nextDue === undefined) this.#tail = item;
    else item.nextDue.prevDue = item;
    if (after === undefined) this.#head = item;
    else after.nextDue = item;
    if (deadline < this.#armedFor) this.#arm(deadline);
  }

  /** Takes `item` off the queue (it settled); a no-op when it is not queued. */
  remove(item: Expiring): void {
    if (!item.queued) return;
    item.queued = false;
    const { prevDue, nextDue } = item;
    if (prevDue === undefined) this.#head = nextDue;
    else prevDue.nextDue = nextDue;
    if (nextDue === undefined) this.#tail = prevDue;
    else nextDue.prevDue = prevDue;
    item.prevDue = undefined;
    item.nextDue = undefined;
  }

  /** Items waiting (for tests and diagnostics; walks the list). */
  get size(): number {
    let count = 0;
    for (let item = this.#head; item !== undefined; item = item.nextDue) count++;
    return count;
  }

  #arm(deadline: number): void {
    this.#timer?.cancel();
    this.#armedFor = deadline;
    // Whole milliseconds, rounded up: firing early only costs a re-arm, never an early expiry.
    // (Real timers are unref'd: an idle queue must not keep the process up.)
    this.#timer = this.clock.setTimer(
      this.#fire,
      Math.max(1, Math.ceil(deadline - this.clock.now())),
    );
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = this.clock.now();
    let item = this.#head;
    while (item !== undefined && item.deadline <= now) {
      this.remove(item);
      item.expire();
      item = this.#head;
    }
    if (item !== undefined) this.#arm(item.deadline);
  };
}
