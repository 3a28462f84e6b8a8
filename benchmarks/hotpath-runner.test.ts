import { describe, expect, it } from 'vitest';
import { turnOrder } from './hotpath-runner.js';

describe('turnOrder', () => {
  it('puts the reference between the two cascades, and runs every other round backwards', () => {
    const names = ['direct', 'reference', 'cascade', 'keyed', 'nginx'] as const;
    expect(turnOrder(names, 0)).toEqual(['direct', 'cascade', 'reference', 'keyed', 'nginx']);
    expect(turnOrder(names, 1)).toEqual(['nginx', 'keyed', 'reference', 'cascade', 'direct']);
    expect(turnOrder(names, 2)).toEqual(turnOrder(names, 0));
  });

  it('keeps only the targets it is given (no keyed target, no nginx)', () => {
    expect(turnOrder(['direct', 'reference', 'cascade'], 0)).toEqual([
      'direct',
      'cascade',
      'reference',
    ]);
    expect(turnOrder(['direct', 'reference', 'cascade'], 1)).toEqual([
      'reference',
      'cascade',
      'direct',
    ]);
  });
});
