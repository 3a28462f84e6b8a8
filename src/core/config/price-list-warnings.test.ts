/** loadPriceList: the warnings a valid price list can still give. */
import { describe, expect, it } from 'vitest';
import { onlyAt } from '../../../test/support/config-loading.js';
import { usePriceLists } from '../../../test/support/price-lists.js';
import { UNKNOWN_METHOD_ID } from '../protocol/method-registry.js';
import { priceOf, priceSourceOf } from './price-list.js';
import { UNPRICED } from './types.js';

const { registry, compile, price } = usePriceLists();

describe('loadPriceList: warnings', () => {
  it('warns that Unknown under [routing] prices nothing', () => {
    const { list, warnings } = compile({ routing: { Unknown: 1 } });
    expect(onlyAt(warnings, 'routing.Unknown').message).toBe('is not a method and prices nothing');
    expect(onlyAt(warnings, 'routing.Unknown').hint).toContain('unknown_method_cost');
    expect(priceOf(list!, UNKNOWN_METHOD_ID)).toBe(UNPRICED);
    expect(priceSourceOf(list!, 'Unknown')).toBeUndefined();
  });

  it('warns about a misspelt standard name with a did-you-mean hint', () => {
    const { warnings } = compile({ routing: { getBalanse: 1, getbalance: 2 } });
    expect(onlyAt(warnings, 'routing.getBalanse').message).toBe(
      'is not a standard method name, so it prices nothing',
    );
    expect(onlyAt(warnings, 'routing.getBalanse').hint).toContain("did you mean 'getBalance'?");
    expect(onlyAt(warnings, 'routing.getbalance').hint).toContain("did you mean 'getBalance'?");
  });

  it('points a provider-specific name under [routing] to [custom]', () => {
    const { list, warnings } = compile({ routing: { qn_fetchNFTsByCollection: 5 } });
    expect(onlyAt(warnings, 'routing.qn_fetchNFTsByCollection').hint).toContain('[custom]');
    expect(registry().idOf('qn_fetchNFTsByCollection')).toBe(UNKNOWN_METHOD_ID);
    expect(list!.named.has('qn_fetchNFTsByCollection')).toBe(false);
  });

  it('warns that [custom] cannot price a standard method', () => {
    const { list, warnings } = compile({ routing: {}, custom: { getBalance: 7 } });
    expect(onlyAt(warnings, 'custom.getBalance').message).toBe(
      'is a standard method; [custom] cannot price it',
    );
    expect(price(list!, 'getBalance')).toBe(UNPRICED);
  });

  it('has no warnings for EVM names under [routing]', () => {
    const { list, warnings } = compile({ routing: { eth_call: 26, net_version: 0 } });
    expect(warnings).toEqual([]);
    expect(price(list!, 'eth_call')).toBe(26);
    expect(priceSourceOf(list!, 'eth_call')).toBe('routing');
  });
});
