import { describe, expect, it } from 'vitest';
import { HedgeBudget } from './hedge-budget.js';

describe('HedgeBudget', () => {
  it('never allows more hedges than the share of hedgeable requests', () => {
    const budget = new HedgeBudget(0.1);
    let hedges = 0;
    for (let request = 1; request <= 1000; request++) {
      budget.earn();
      // Every request is slow: each asks for a hedge.
      if (budget.take()) hedges++;
      expect(hedges).toBeLessThanOrEqual(Math.floor(request * 0.1 + 1e-9));
    }
    expect(hedges).toBe(100);
  });

  it('saves at most `burst` hedges through a quiet period', () => {
    const budget = new HedgeBudget(0.5, 3);
    for (let i = 0; i < 100; i++) budget.earn();
    const taken = [budget.take(), budget.take(), budget.take(), budget.take()];
    expect(taken).toEqual([true, true, true, false]);
  });

  it('never hedges with a share of 0', () => {
    const budget = new HedgeBudget(0);
    for (let i = 0; i < 100; i++) budget.earn();
    expect(budget.available()).toBe(false);
    expect(budget.take()).toBe(false);
  });
});
