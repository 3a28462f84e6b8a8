/** priceOf / priceSourceOf: what a request costs on a compiled list. */
import { describe, expect, it } from 'vitest';
import type { PriceListSpec } from '../../../test/support/config-files.js';
import { usePriceLists } from '../../../test/support/price-lists.js';
import { UNKNOWN_METHOD_ID } from '../protocol/method-registry.js';
import { priceOf, priceSourceOf } from './price-list.js';
import { UNPRICED } from './types.js';

const { registry, compiled, price } = usePriceLists();

describe('priceOf / priceSourceOf', () => {
  const withFallback: PriceListSpec = {
    limits: { unknown_method_cost: 20 },
    routing: { getBalance: 10, getHealth: 0 },
    custom: { acme_getFoo: 50 },
  };

  it.each<[string, number, string | undefined]>([
    ['getBalance', 10, 'routing'],
    ['getHealth', 0, 'routing'],
    ['acme_getFoo', 50, 'custom'],
    ['getSlot', 20, 'unknown_method_cost'],
    ['never_seen_method', 20, 'unknown_method_cost'],
    ['getbalance', 20, 'unknown_method_cost'],
  ])('prices %s at %d from %s when the list has a fallback', (method, cost, source) => {
    const list = compiled(withFallback);
    expect(price(list, method)).toBe(cost);
    expect(priceSourceOf(list, method)).toBe(source);
  });

  it.each<[string, number, string | undefined]>([
    ['getBalance', 10, 'routing'],
    ['getHealth', 0, 'routing'],
    ['acme_getFoo', 50, 'custom'],
    ['getSlot', UNPRICED, undefined],
    ['never_seen_method', UNPRICED, undefined],
  ])('prices %s at %d from %s when the list has no fallback', (method, cost, source) => {
    const { limits: _limits, ...spec } = withFallback;
    const list = compiled(spec);
    expect(price(list, method)).toBe(cost);
    expect(priceSourceOf(list, method)).toBe(source);
  });

  it('keeps a price of 0 distinct from unpriced', () => {
    const list = compiled({ routing: { getHealth: 0 } });
    expect(price(list, 'getHealth')).toBe(0);
    expect(price(list, 'getHealth')).not.toBe(UNPRICED);
    expect(price(list, 'getSlot')).toBe(UNPRICED);
  });

  it('lets [routing] win over the fallback and over a same-named [custom] entry', () => {
    const list = compiled({
      limits: { unknown_method_cost: 99 },
      routing: { getBalance: 3 },
      custom: { getBalance: 7 },
    });
    expect(price(list, 'getBalance')).toBe(3);
    expect(priceSourceOf(list, 'getBalance')).toBe('routing');
  });

  it('gives custom methods interned after the table was built the fallback price', () => {
    const early = compiled({ limits: { unknown_method_cost: 20 }, routing: {} });
    const earlyNoFallback = compiled({ routing: {} });
    const later = compiled({ routing: {}, custom: { acme_late: 5 } });
    const id = registry().idOf('acme_late');
    expect(id).toBeGreaterThanOrEqual(early.table.length);
    expect(priceOf(early, id)).toBe(20);
    expect(priceSourceOf(early, 'acme_late')).toBe('unknown_method_cost');
    expect(priceOf(earlyNoFallback, id)).toBe(UNPRICED);
    expect(priceOf(later, id)).toBe(5);
  });

  it('gives custom methods interned before the table was built the fallback price', () => {
    compiled({ routing: {}, custom: { acme_early: 5 } });
    const list = compiled({ limits: { unknown_method_cost: 20 }, routing: {} });
    expect(price(list, 'acme_early')).toBe(20);
  });

  it('prices the unknown-method id by the fallback only', () => {
    expect(priceOf(compiled({ limits: { unknown_method_cost: 4 } }), UNKNOWN_METHOD_ID)).toBe(4);
    expect(priceOf(compiled({}), UNKNOWN_METHOD_ID)).toBe(UNPRICED);
  });

  it('records the explicitly named methods with their source', () => {
    const list = compiled(withFallback);
    expect([...list.named.entries()]).toEqual([
      ['getBalance', { cost: 10, source: 'routing' }],
      ['getHealth', { cost: 0, source: 'routing' }],
      ['acme_getFoo', { cost: 50, source: 'custom' }],
    ]);
  });

  it('shares custom ids between lists that name the same custom method', () => {
    const a = compiled({ routing: {}, custom: { acme_shared: 1 } });
    const b = compiled({ routing: {}, custom: { acme_shared: 2 } });
    expect(price(a, 'acme_shared')).toBe(1);
    expect(price(b, 'acme_shared')).toBe(2);
  });
});
