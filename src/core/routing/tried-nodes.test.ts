import { describe, expect, it } from 'vitest';
import type { UpstreamNode } from '../node/upstream-node.js';
import { TriedNodes } from './tried-nodes.js';

const [a, b, c] = ['a', 'b', 'c'].map((name) => ({ name }) as unknown as UpstreamNode);

describe('TriedNodes', () => {
  it('holds one node in its slot and more in an array', () => {
    const tried = new TriedNodes();
    expect(tried.includes(a!)).toBe(false);
    tried.push(a!);
    tried.push(b!);
    expect([a, b, c].map((n) => tried.includes(n!))).toEqual([true, true, false]);
  });

  it('forgets a node, whether in the slot or the array', () => {
    const tried = new TriedNodes();
    tried.push(a!);
    tried.push(b!);
    tried.push(c!);
    tried.remove(a!);
    tried.remove(c!);
    expect([a, b, c].map((n) => tried.includes(n!))).toEqual([false, true, false]);
    tried.push(a!);
    expect(tried.includes(a!)).toBe(true);
  });
});
