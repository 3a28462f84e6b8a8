import { describe, expect, it } from 'vitest';
import { Penalty, penaltySeconds } from './penalty.js';

describe('penaltySeconds', () => {
  it.each([
    [0, 5],
    [3, 5],
    [5, 5],
    [7, 7],
    [300, 300],
    [301, 300],
    [86_400, 300],
  ])('Retry-After %i s → %i s', (asked, expected) => {
    expect(penaltySeconds(asked)).toBe(expected);
  });
});

describe('Penalty', () => {
  it('lasts 5 s for a plain failure', () => {
    const penalty = new Penalty();
    penalty.penalize(1000, 0);
    expect(penalty.isActive(5999)).toBe(true);
    expect(penalty.isActive(6000)).toBe(false);
  });

  it('is extended by a longer Retry-After', () => {
    const penalty = new Penalty();
    penalty.penalize(0, 0);
    penalty.penalize(1000, 60);
    expect(penalty.until).toBe(61_000);
  });

  it('is never shortened by a later, shorter failure', () => {
    const penalty = new Penalty();
    penalty.penalize(0, 300);
    penalty.penalize(10_000, 0);
    expect(penalty.until).toBe(300_000);
  });

  it('is cleared by a success', () => {
    const penalty = new Penalty();
    penalty.penalize(0, 100);
    penalty.clear();
    expect(penalty.isActive(1)).toBe(false);
  });
});
