import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { IndexedCounter, IndexedHistogram } from './indexed-series.js';

const BOUNDS = [0.001, 0.01, 0.1, 1];

describe('indexed series', () => {
  it('renders a histogram exactly as prom-client does for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const indexed = new IndexedHistogram('h_seconds', 'help text', BOUNDS, ours);
    const reference = new Histogram({
      name: 'h_seconds',
      help: 'help text',
      labelNames: ['node', 'outcome'],
      buckets: BOUNDS,
      registers: [theirs],
    });
    const a = indexed.add({ node: 'a', outcome: 'success' });
    const b = indexed.add({ node: 'b"q', outcome: 'invalid_json' });
    for (const [index, labels, value] of [
      [a, { node: 'a', outcome: 'success' }, 0.0005],
      [a, { node: 'a', outcome: 'success' }, 0.02],
      [a, { node: 'a', outcome: 'success' }, 5],
      [b, { node: 'b"q', outcome: 'invalid_json' }, 0.001],
    ] as const) {
      indexed.observe(index, value);
      reference.observe(labels, value);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('renders counters like prom-client, series at 0 included, removed series gone', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const indexed = new IndexedCounter('c_total', 'help', ours);
    const reference = new Counter({
      name: 'c_total',
      help: 'help',
      labelNames: ['reason'],
      registers: [theirs],
    });
    const x = indexed.add({ reason: 'x' });
    indexed.add({ reason: 'y' });
    const gone = indexed.add({ reason: 'gone' });
    indexed.inc(x);
    indexed.inc(x);
    indexed.inc(gone);
    indexed.remove(gone);
    reference.inc({ reason: 'x' }, 2);
    reference.inc({ reason: 'y' }, 0);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
