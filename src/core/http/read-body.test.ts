import { describe, expect, it } from 'vitest';
import { declaredOver } from './read-body.js';

describe('declaredOver', () => {
  it('agrees with Number(text) > limit for every digit text Node would pass', () => {
    const limits = [0, 1, 9, 10, 99, 100, 1024, 1_048_576, 10_000_000];
    const texts: string[] = [];
    for (let n = 0; n <= 1100; n++) texts.push(String(n));
    for (const limit of limits) {
      for (const delta of [-11, -10, -1, 0, 1, 10, 11]) {
        const n = limit + delta;
        if (n < 0) continue;
        texts.push(String(n), `0${n}`, `000${n}`);
      }
    }
    texts.push('', '0', '00000000000000000000001', '99999999999999999999');
    // Limits change between calls (two chains, a reload): each is judged by its own.
    for (const limit of limits) {
      for (const text of texts) expect(declaredOver(text, limit)).toBe(Number(text) > limit);
    }
  });
});
