import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { DeadlineQueue, type Expiring } from './deadline-queue.js';

class Item implements Expiring {
  deadline = 0;
  prevDue: Expiring | undefined = undefined;
  nextDue: Expiring | undefined = undefined;
  queued = false;

  constructor(
    readonly name: string,
    private readonly log: string[],
    private readonly onExpire?: () => void,
  ) {}

  expire(): void {
    this.log.push(this.name);
    this.onExpire?.();
  }
}

describe('DeadlineQueue', () => {
  let clock: ManualClock;
  let queue: DeadlineQueue;
  let log: string[];
  const advance = (ms: number): void => clock.advance(ms);

  beforeEach(() => {
    clock = new ManualClock();
    queue = new DeadlineQueue(clock);
    log = [];
  });

  it('expires items at their deadlines, in deadline order, whatever the order they came in', () => {
    queue.add(new Item('500', log), 500);
    queue.add(new Item('200', log), 200);
    queue.add(new Item('350', log), 350);
    advance(199);
    expect(log).toEqual([]);
    advance(1);
    expect(log).toEqual(['200']);
    advance(150);
    expect(log).toEqual(['200', '350']);
    advance(150);
    expect(log).toEqual(['200', '350', '500']);
    expect(queue.size).toBe(0);
  });

  it('never expires an item removed before its deadline, and keeps the others', () => {
    const a = new Item('a', log);
    const b = new Item('b', log);
    const c = new Item('c', log);
    queue.add(a, 100);
    queue.add(b, 100);
    queue.add(c, 100);
    queue.remove(b);
    queue.remove(a);
    queue.remove(a); // twice is harmless
    expect(queue.size).toBe(1);
    advance(100);
    expect(log).toEqual(['c']);
  });

  it('expires an item added later with an earlier deadline on time (re-arms the timer)', () => {
    queue.add(new Item('late', log), 500);
    advance(10);
    queue.add(new Item('early', log), 20);
    advance(20);
    expect(log).toEqual(['early']);
    advance(470);
    expect(log).toEqual(['early', 'late']);
  });

  it('still expires later items when the one the timer was armed for settled early', () => {
    const first = new Item('first', log);
    queue.add(first, 100);
    advance(50);
    queue.add(new Item('second', log), 100);
    queue.remove(first);
    advance(50); // the timer fires for `first`, finds nothing due and re-arms
    expect(log).toEqual([]);
    advance(50);
    expect(log).toEqual(['second']);
  });

  it('lets an expiring item queue a new one (a retry after a timeout)', () => {
    queue.add(new Item('attempt 1', log, () => queue.add(new Item('attempt 2', log), 100)), 100);
    advance(100);
    expect(log).toEqual(['attempt 1']);
    expect(queue.size).toBe(1);
    advance(100);
    expect(log).toEqual(['attempt 1', 'attempt 2']);
  });

  it('does not expire an item when the timer fires a little before the deadline', () => {
    queue.add(new Item('a', log), 10.4);
    // The timer is set for whole milliseconds (11); the clock reads 10.4 exactly at 10.4.
    advance(10.4);
    expect(log).toEqual([]);
    advance(0.6);
    expect(log).toEqual(['a']);
  });
});
