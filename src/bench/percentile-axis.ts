/** The x axis of a percentile curve, HdrHistogram style: each added nine one unit further right. */
import type { Axis } from './svg-chart.js';

/** Percentile (0–100) to the x of an HdrHistogram-style axis: 90% → 1, 99% → 2, 99.9% → 3. */
export function percentileX(percentile: number, tail = 4): number {
  if (percentile >= 100) return tail + 0.5;
  return Math.max(0, Math.min(tail + 0.5, -Math.log10(1 - percentile / 100)));
}

/** The x axis of a percentile curve, up to `tail` nines plus the max. */
export function percentileAxis(tail = 4): Axis {
  const labels = ['0%', '90%', '99%', '99.9%', '99.99%', '99.999%'];
  const ticks = labels.slice(0, tail + 1).map((label, i) => ({ value: i, label }));
  return {
    label: 'percentile of requests (log scale towards the tail)',
    min: 0,
    max: tail + 0.5,
    ticks: [...ticks, { value: tail + 0.5, label: 'max' }],
  };
}
