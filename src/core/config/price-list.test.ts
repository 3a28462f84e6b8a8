/** loadPriceList: what a valid price list holds and every problem it can report. */
import { describe, expect, it } from 'vitest';
import { priceListToml, type PriceListSpec } from '../../../test/support/config-files.js';
import { onlyAt } from '../../../test/support/config-loading.js';
import { usePriceLists } from '../../../test/support/price-lists.js';
import { raw } from '../../../test/support/toml.js';
import { loadPriceList } from './price-list.js';
import { ProblemList } from './problem-list.js';
import { UNPRICED } from './types.js';

const { temp, registry, compile, compiled, price } = usePriceLists();

describe('loadPriceList: validation', () => {
  it('defaults spillover_percent to 95 and has no fallback price', () => {
    const list = compiled({});
    expect(list.spilloverPercent).toBe(95);
    expect(list.unknownMethodCost).toBeUndefined();
  });

  it('accepts an empty [routing]', () => {
    const list = compiled({ routing: {} });
    expect(list.named.size).toBe(0);
  });

  it('reads [websocket] prices, 0 for the keys it omits, none without the table', () => {
    const { list, errors } = compile('[routing]\n[websocket]\nconnection = 1\ntenth_mb = 2\n');
    expect(errors).toEqual([]);
    expect(list!.websocket).toEqual({
      connection: 1,
      subscribe: 0,
      unsubscribe: 0,
      notification: 0,
      tenthMb: 2,
    });
    expect(compiled({}).websocket).toBeUndefined();
  });

  it('refuses an unknown [websocket] key and a price that is not a whole number', () => {
    const { errors } = compile('[routing]\n[websocket]\nper_message = 1\nsubscribe = 0.5\n');
    expect(onlyAt(errors, 'websocket.per_message').hint).toContain('notification');
    expect(onlyAt(errors, 'websocket.subscribe').message).toBe(
      'must be a whole number, got the float 0.5',
    );
  });

  it.each<[string, PriceListSpec | string, string, string]>([
    ['a missing [routing]', { routing: null }, 'routing', 'the [routing] table is missing'],
    ['[routing] that is not a table', 'routing = 5\n', 'routing', 'must be a table, got number 5'],
    [
      '[custom] that is not a table',
      'custom = "x"\n[routing]\n',
      'custom',
      'must be a table, got the string "x"',
    ],
    ['[limits] that is not a table', 'limits = 1\n[routing]\n', 'limits', 'must be a table'],
    [
      'spillover_percent 0',
      { limits: { spillover_percent: 0 } },
      'limits.spillover_percent',
      'spillover_percent must be in 1..=100, got 0',
    ],
    [
      'spillover_percent 101',
      { limits: { spillover_percent: 101 } },
      'limits.spillover_percent',
      'spillover_percent must be in 1..=100, got 101',
    ],
    [
      'a quoted spillover_percent',
      { limits: { spillover_percent: '95' } },
      'limits.spillover_percent',
      'must be a whole number, got the string "95"',
    ],
    [
      'a fractional spillover_percent',
      { limits: { spillover_percent: 95.5 } },
      'limits.spillover_percent',
      'got the float 95.5',
    ],
    [
      'a negative unknown_method_cost',
      { limits: { unknown_method_cost: -1 } },
      'limits.unknown_method_cost',
      'got -1',
    ],
    [
      'a quoted unknown_method_cost',
      { limits: { unknown_method_cost: '20' } },
      'limits.unknown_method_cost',
      'got the string "20"',
    ],
    [
      'a negative price',
      { routing: { getBalance: -1 } },
      'routing.getBalance',
      'must be a whole number of credits from 0 to 4294967294, got number -1',
    ],
    ['a fractional price', { routing: { getBalance: 1.5 } }, 'routing.getBalance', 'float 1.5'],
    [
      'a quoted price',
      { routing: { getBalance: '10' } },
      'routing.getBalance',
      'got the string "10"',
    ],
    [
      'a boolean price',
      { routing: { getBalance: true } },
      'routing.getBalance',
      'got boolean true',
    ],
    [
      'a price equal to the "unpriced" marker',
      { routing: { getBalance: UNPRICED } },
      'routing.getBalance',
      'from 0 to 4294967294',
    ],
    [
      'a negative custom price',
      { custom: { acme_getFoo: -3 } },
      'custom.acme_getFoo',
      'got number -3',
    ],
    [
      'a nested table under [routing]',
      '[routing]\nget.Balance = 1\n',
      'routing.get',
      'got a table',
    ],
  ])('rejects %s', (_case, spec, at, message) => {
    const { list, errors } = compile(spec);
    expect(list).toBeUndefined();
    expect(onlyAt(errors, at).message).toContain(message);
  });

  it.each<[string, string]>([
    ['limit', 'limits'],
    ['Routing', 'routing'],
    ['customs', 'custom'],
  ])('rejects the unknown table [%s] with "did you mean %s"', (table, suggestion) => {
    const { errors } = compile(`[${table}]\nx = 1\n${priceListToml()}`);
    const problem = onlyAt(errors, table);
    expect(problem.message).toBe('unknown key');
    expect(problem.hint).toBe(`did you mean '${suggestion}'?`);
  });

  it.each<[string, string]>([
    ['spillover_percnt', 'spillover_percent'],
    ['unknown_method_costs', 'unknown_method_cost'],
  ])('rejects the unknown [limits] key %s with "did you mean %s"', (key, suggestion) => {
    const { errors } = compile({ limits: { [key]: 1 } });
    expect(onlyAt(errors, `limits.${key}`).hint).toBe(`did you mean '${suggestion}'?`);
  });

  it('accepts the edges: spillover 1 and 100, price 0 and 4294967294', () => {
    expect(compiled({ limits: { spillover_percent: 1 } }).spilloverPercent).toBe(1);
    expect(compiled({ limits: { spillover_percent: 100 } }).spilloverPercent).toBe(100);
    const list = compiled({ routing: { getBalance: 0, getSlot: UNPRICED - 1 } });
    expect(price(list, 'getBalance')).toBe(0);
    expect(price(list, 'getSlot')).toBe(UNPRICED - 1);
  });

  it('accepts digit separators in prices', () => {
    expect(
      price(compiled({ routing: { getLargestAccounts: raw('3_000') } }), 'getLargestAccounts'),
    ).toBe(3000);
  });

  it('reports every problem in the file in one pass', () => {
    const { errors } = compile({
      limits: { spillover_percent: 0, unknown_method_cost: -5, extra: 1 },
      routing: { getBalance: -1, getSlot: 'x' },
      custom: { acme_getFoo: 1.5 },
    });
    expect(errors.map((problem) => problem.path).sort()).toEqual(
      [
        'limits.spillover_percent',
        'limits.unknown_method_cost',
        'limits.extra',
        'routing.getBalance',
        'routing.getSlot',
        'custom.acme_getFoo',
      ].sort(),
    );
    for (const problem of errors) expect(problem.file).toMatch(/list-\d+\.toml$/);
  });

  it('reports a missing file by its absolute path', () => {
    const problems = new ProblemList();
    const file = temp.path('absent.toml');
    expect(loadPriceList(file, 'absent.toml', registry(), problems)).toBeUndefined();
    expect(problems.errors).toEqual([
      {
        file,
        path: '',
        message: 'cannot read price list: file not found',
        hint: expect.stringContaining('"absent.toml" is relative'),
      },
    ]);
  });

  it('reports a file that is not valid TOML', () => {
    const { list, errors } = compile('[routing\ngetBalance = 1\n');
    expect(list).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/^not valid TOML: /);
  });

  it('does not intern custom names from a list with errors', () => {
    const before = registry().size;
    compile({ routing: { getBalance: -1 }, custom: { acme_getFoo: 1 } });
    expect(registry().size).toBe(before);
  });
});
