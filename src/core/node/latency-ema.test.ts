import { describe, expect, it } from 'vitest';
import { LatencyEma } from './latency-ema.js';

describe('LatencyEma', () => {
  it('starts unmeasured and sorts last (Infinity)', () => {
    const ema = new LatencyEma();
    expect(ema.isMeasured).toBe(false);
    expect(ema.micros).toBe(Infinity);
  });

  it('takes the first sample as is', () => {
    const ema = new LatencyEma();
    ema.observe(3);
    expect(ema.micros).toBe(3000);
  });

  it('moves 1/8 of the way with integer shifts', () => {
    const ema = new LatencyEma();
    ema.observe(8);
    ema.observe(16);
    // 8000 - (8000 >> 3) + (16000 >> 3) = 8000 - 1000 + 2000
    expect(ema.micros).toBe(9000);
  });

  it('caps a huge sample at the 32-bit maximum', () => {
    const ema = new LatencyEma();
    ema.observe(10_000_000);
    expect(ema.micros).toBe(0xfffffffe);
    ema.observe(10_000_000);
    expect(ema.micros).toBeLessThanOrEqual(0xfffffffe);
  });
});
