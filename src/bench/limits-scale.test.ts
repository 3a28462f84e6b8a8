import { describe, expect, it } from 'vitest';
import { autoLimitsScale, scaleLimit } from './limits-scale.js';

const MOCK_NODES = [
  { tier: 0, rpsLimit: 30_000 },
  { tier: 0, rpsLimit: 30_000 },
  { tier: 1, rpsLimit: 25_000 },
  { tier: 1, rpsLimit: 25_000 },
  { tier: 2, rpsLimit: 20_000 },
  { tier: 2, rpsLimit: 15_000 },
];

describe('autoLimitsScale', () => {
  it('fills tier 0 and half of tier 1 with the measured rate', () => {
    const scale = autoLimitsScale(8500, MOCK_NODES);
    expect(scale).toBe(0.1);
    const tier0 = 60_000 * scale;
    expect(8500).toBeGreaterThan(tier0);
    expect(8500).toBeLessThan(tier0 + 50_000 * scale);
  });

  it('ignores unlimited nodes and falls back to 1 when nothing is limited', () => {
    expect(autoLimitsScale(1000, [{ tier: 0, rpsLimit: Infinity }])).toBe(1);
    expect(autoLimitsScale(0, MOCK_NODES)).toBe(1);
  });

  it('keeps three significant digits', () => {
    expect(autoLimitsScale(1234, MOCK_NODES)).toBe(0.0145);
  });
});

describe('scaleLimit', () => {
  it('rounds, keeps at least 1, and leaves no-limit alone', () => {
    expect(scaleLimit(30_000, 0.0145)).toBe(435);
    expect(scaleLimit(10, 0.001)).toBe(1);
    expect(scaleLimit(Infinity, 0.5)).toBe(Infinity);
    expect(scaleLimit(100, null)).toBe(Infinity);
  });
});
