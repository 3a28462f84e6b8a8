import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { Permits } from './permits.js';

describe('Permits', () => {
  it('hands out at most max permits', () => {
    const permits = new Permits(2, new ManualClock());
    expect(permits.tryAcquire()).toBe(true);
    expect(permits.tryAcquire()).toBe(true);
    expect(permits.tryAcquire()).toBe(false);
    permits.release();
    expect(permits.tryAcquire()).toBe(true);
    expect(permits.peak).toBe(2);
  });

  it('max 0 never grants a permit', async () => {
    const clock = new ManualClock();
    const permits = new Permits(0, clock);
    expect(permits.tryAcquire()).toBe(false);
    const waiting = permits.waitFor(5);
    clock.advance(5);
    expect(await waiting).toBe(false);
  });

  it('passes a released permit to waiters in FIFO order', async () => {
    const permits = new Permits(1, new ManualClock());
    permits.tryAcquire();
    const order: number[] = [];
    const first = permits.waitFor(10_000).then((ok) => order.push(ok ? 1 : -1));
    const second = permits.waitFor(10_000).then((ok) => order.push(ok ? 2 : -2));
    permits.release();
    await first;
    permits.release();
    await second;
    expect(order).toEqual([1, 2]);
    expect(permits.inFlight).toBe(1);
  });

  it('gives up waiting at the timeout and leaves the queue', async () => {
    const clock = new ManualClock();
    const permits = new Permits(1, clock);
    permits.tryAcquire();
    let settled: boolean | undefined;
    const waiting = permits.waitFor(100).then((ok) => (settled = ok));
    clock.advance(99);
    await Promise.resolve();
    expect(settled).toBeUndefined();
    clock.advance(1);
    await waiting;
    expect(settled).toBe(false);
    permits.release();
    expect(permits.inFlight).toBe(0);
  });

  it('raising max admits waiters; lowering it keeps in-flight permits', async () => {
    const permits = new Permits(1, new ManualClock());
    permits.tryAcquire();
    const waiting = permits.waitFor(10_000);
    permits.setMax(2);
    expect(await waiting).toBe(true);
    expect(permits.inFlight).toBe(2);
    permits.setMax(1);
    permits.release();
    expect(permits.inFlight).toBe(1);
    expect(permits.tryAcquire()).toBe(false);
  });
});
