import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('starts full: a burst of rps_limit tokens is available at once', () => {
    const bucket = new TokenBucket(5, 0);
    for (let i = 0; i < 5; i++) expect(bucket.tryTake(0)).toBe(0);
    expect(bucket.tryTake(0)).toBeGreaterThan(0);
  });

  it('reports the exact wait until the next token when empty', () => {
    const bucket = new TokenBucket(10, 0);
    for (let i = 0; i < 10; i++) bucket.tryTake(0);
    expect(bucket.tryTake(0)).toBeCloseTo(100, 6);
    expect(bucket.tryTake(40)).toBeCloseTo(60, 6);
  });

  it('refills continuously at rps_limit tokens per second', () => {
    const bucket = new TokenBucket(4, 0);
    for (let i = 0; i < 4; i++) bucket.tryTake(0);
    expect(bucket.tryTake(249)).toBeGreaterThan(0);
    expect(bucket.tryTake(250)).toBe(0);
    expect(bucket.tryTake(250)).toBeGreaterThan(0);
  });

  it('never holds more than its capacity, however long it idles', () => {
    const bucket = new TokenBucket(3, 0);
    expect(bucket.available(60_000)).toBe(3);
  });

  it('keeps earned tokens across a reconfigure, capped at the new capacity', () => {
    const bucket = new TokenBucket(10, 0);
    for (let i = 0; i < 8; i++) bucket.tryTake(0);
    bucket.reconfigure(100, 0);
    expect(bucket.available(0)).toBeCloseTo(2, 6);
    bucket.reconfigure(1, 0);
    expect(bucket.available(0)).toBeCloseTo(1, 6);
  });

  it('does not go backwards when the clock repeats a reading', () => {
    const bucket = new TokenBucket(1, 1000);
    expect(bucket.tryTake(1000)).toBe(0);
    expect(bucket.tryTake(900)).toBeCloseTo(1000, 6);
  });
});
