import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { priceListToml, type PriceListSpec } from '../../../test/helpers/config-files.js';
import { makeTempDir, type TempDir } from '../../../test/helpers/temp-dir.js';
import { raw } from '../../../test/helpers/toml.js';
import { MethodRegistry, UNKNOWN_METHOD_ID } from '../protocol/method-registry.js';
import { loadPriceList, priceOf, priceSourceOf } from './price-list.js';
import { ProblemList } from './problem-list.js';
import { UNPRICED, type ConfigProblem, type PriceList } from './types.js';

let temp: TempDir;
let registry: MethodRegistry;
beforeEach(() => {
  temp = makeTempDir('cascade-prices-');
  registry = new MethodRegistry();
});
afterEach(() => temp.cleanup());

interface Loaded {
  readonly list: PriceList | undefined;
  readonly errors: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
}

let fileCounter = 0;

/** Writes a price list into the temp dir and compiles it with the shared registry. */
function compile(spec: PriceListSpec | string): Loaded {
  const name = `list-${fileCounter++}.toml`;
  temp.write({ [name]: typeof spec === 'string' ? spec : priceListToml(spec) });
  const problems = new ProblemList();
  const list = loadPriceList(temp.path(name), name, registry, problems);
  return { list, errors: problems.errors, warnings: problems.warnings };
}

function compiled(spec: PriceListSpec): PriceList {
  const { list, errors } = compile(spec);
  expect(errors).toEqual([]);
  return list!;
}

function price(list: PriceList, method: string): number {
  return priceOf(list, registry.idOf(method));
}

function onlyAt(problems: readonly ConfigProblem[], at: string): ConfigProblem {
  const found = problems.filter((problem) => problem.path === at);
  expect(found, `problems at ${at}: ${JSON.stringify(problems)}`).toHaveLength(1);
  return found[0]!;
}

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
    expect(loadPriceList(file, 'absent.toml', registry, problems)).toBeUndefined();
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
    const before = registry.size;
    compile({ routing: { getBalance: -1 }, custom: { acme_getFoo: 1 } });
    expect(registry.size).toBe(before);
  });
});

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
    expect(registry.idOf('qn_fetchNFTsByCollection')).toBe(UNKNOWN_METHOD_ID);
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
    const id = registry.idOf('acme_late');
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
