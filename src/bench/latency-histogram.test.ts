import { describe, expect, it } from 'vitest';
import { CURVE_PERCENTILES, LatencyHistogram } from './latency-histogram.js';

describe('LatencyHistogram', () => {
  it('reports ordered percentiles in ms with microsecond precision', () => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) h.record(i / 10); // 0.1 ms … 100 ms
    const s = h.summary();
    expect(s.count).toBe(1000);
    expect(s.min).toBeCloseTo(0.1, 3);
    expect(s.p50).toBeCloseTo(50, 0);
    expect(s.p99).toBeCloseTo(99, 0);
    expect(s.max).toBeCloseTo(100, 0);
    const ordered = [s.min, s.p50, s.p75, s.p90, s.p95, s.p99, s.p99_9, s.p99_99, s.max];
    expect([...ordered].sort((a, b) => a - b)).toEqual(ordered);
    h.destroy();
  });

  it('is all zeros when nothing was recorded, and has no curve', () => {
    const h = new LatencyHistogram();
    expect(h.summary()).toMatchObject({ count: 0, min: 0, p50: 0, max: 0 });
    expect(h.curve()).toEqual([]);
  });

  it('draws its curve through every curve percentile, non-decreasing', () => {
    const h = new LatencyHistogram();
    for (const ms of [1, 2, 3, 5, 8, 13, 21]) h.record(ms);
    const curve = h.curve();
    expect(curve.map((p) => p.percentile)).toEqual([...CURVE_PERCENTILES]);
    for (let i = 1; i < curve.length; i++)
      expect(curve[i]!.ms).toBeGreaterThanOrEqual(curve[i - 1]!.ms);
    expect(curve[0]!.ms).toBeCloseTo(1, 2);
    expect(curve.at(-1)!.ms).toBeCloseTo(21, 1);
  });
});
