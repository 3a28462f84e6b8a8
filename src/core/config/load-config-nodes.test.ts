/** loadConfig: the fields of one [[nodes]] entry, monthly_limit and the spillover threshold. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { balancerToml, nodeFields, priceListToml } from '../../../test/support/config-files.js';
import { onlyAt, useConfigDir } from '../../../test/support/config-loading.js';
import { raw, type TomlFields } from '../../../test/support/toml.js';

const { temp, load, loadNode } = useConfigDir();

describe('loadConfig: [[nodes]] fields', () => {
  it('loads a valid node with its values', () => {
    const result = loadNode({ reset_day: 15, tier: 2 });
    expect(result.errors).toEqual([]);
    const node = result.config!.nodes[0]!;
    expect(node).toMatchObject({
      name: 'node-a',
      url: 'http://127.0.0.1:8891',
      redactedUrl: 'http://127.0.0.1:8891/',
      tier: 2,
      rpsLimit: 100,
      maxConcurrent: 10,
      monthlyLimit: 1000,
      spilloverThreshold: 950,
      resetDay: 15,
    });
    expect(node.pricing.path).toBe(path.join(temp.dir, 'prices/basic.toml'));
    expect(node.pricing.configuredPath).toBe('prices/basic.toml');
  });

  it('treats an omitted rps_limit and max_concurrent as no limit (Infinity)', () => {
    const node = loadNode({ rps_limit: undefined, max_concurrent: undefined }).config!.nodes[0]!;
    expect(node.rpsLimit).toBe(Infinity);
    expect(node.maxConcurrent).toBe(Infinity);
  });

  it('defaults reset_day to 1 and accepts 1 and 31', () => {
    expect(loadNode({}).config!.nodes[0]!.resetDay).toBe(1);
    expect(loadNode({ reset_day: 1 }).config!.nodes[0]!.resetDay).toBe(1);
    expect(loadNode({ reset_day: 31 }).config!.nodes[0]!.resetDay).toBe(31);
  });

  it('accepts TOML digit separators such as 50_000_000', () => {
    const node = loadNode({ monthly_limit: raw('50_000_000'), rps_limit: raw('1_000') }).config!
      .nodes[0]!;
    expect(node.monthlyLimit).toBe(50_000_000);
    expect(node.rpsLimit).toBe(1000);
  });

  it('accepts tier 0 and 255 and max_concurrent 0', () => {
    expect(loadNode({ tier: 255 }).config!.nodes[0]!.tier).toBe(255);
    expect(loadNode({ tier: 0 }).config!.nodes[0]!.tier).toBe(0);
    expect(loadNode({ max_concurrent: 0 }).config!.nodes[0]!.maxConcurrent).toBe(0);
  });

  it.each<[string, TomlFields, string, string]>([
    ['name missing', { name: undefined }, 'nodes[0].name', 'is required'],
    ['name not a string', { name: 7 }, 'nodes[0].name', 'must be a string, got number 7'],
    ['name empty', { name: '' }, 'nodes[0].name', 'must not be empty'],
    ['url missing', { url: undefined }, 'nodes[0].url', 'is required'],
    ['url not a string', { url: 8899 }, 'nodes[0].url', 'must be a string'],
    [
      'a scheme-less url',
      { url: '127.0.0.1:8899' },
      'nodes[0].url',
      "invalid URL for node 'node-a'",
    ],
    [
      'a url that is not a URL',
      { url: 'not a url' },
      'nodes[0].url',
      "invalid URL for node 'node-a'",
    ],
    ['an empty url', { url: '' }, 'nodes[0].url', "invalid URL for node 'node-a'"],
    [
      'an ftp url',
      { url: 'ftp://127.0.0.1/rpc' },
      'nodes[0].url',
      "unsupported scheme 'ftp:' for node 'node-a'",
    ],
    [
      'a websocket url',
      { url: 'wss://rpc.example.com' },
      'nodes[0].url',
      "unsupported scheme 'wss:' for node 'node-a'",
    ],
    ['tier missing', { tier: undefined }, 'nodes[0].tier', 'is required'],
    ['tier negative', { tier: -1 }, 'nodes[0].tier', 'must be between 0 and 255, got -1'],
    ['tier 256', { tier: 256 }, 'nodes[0].tier', 'must be between 0 and 255, got 256'],
    ['tier quoted', { tier: '0' }, 'nodes[0].tier', 'must be a whole number, got the string "0"'],
    ['tier a float', { tier: 1.5 }, 'nodes[0].tier', 'got the float 1.5'],
    ['rps_limit 0', { rps_limit: 0 }, 'nodes[0].rps_limit', "RPS for node 'node-a' cannot be 0"],
    ['rps_limit negative', { rps_limit: -1 }, 'nodes[0].rps_limit', 'got -1'],
    ['rps_limit quoted', { rps_limit: '100' }, 'nodes[0].rps_limit', 'got the string "100"'],
    ['rps_limit quoted zero', { rps_limit: '0' }, 'nodes[0].rps_limit', 'got the string "0"'],
    ['rps_limit a float', { rps_limit: 0.5 }, 'nodes[0].rps_limit', 'got the float 0.5'],
    [
      'rps_limit above u32',
      { rps_limit: 2 ** 32 },
      'nodes[0].rps_limit',
      'must be between 1 and 4294967295',
    ],
    ['max_concurrent negative', { max_concurrent: -1 }, 'nodes[0].max_concurrent', 'got -1'],
    ['max_concurrent a boolean', { max_concurrent: true }, 'nodes[0].max_concurrent', 'whole'],
    ['monthly_limit missing', { monthly_limit: undefined }, 'nodes[0].monthly_limit', 'required'],
    ['monthly_limit negative', { monthly_limit: -1 }, 'nodes[0].monthly_limit', 'got -1'],
    [
      'monthly_limit quoted',
      { monthly_limit: '1000' },
      'nodes[0].monthly_limit',
      'got the string "1000"',
    ],
    [
      'reset_day 0',
      { reset_day: 0 },
      'nodes[0].reset_day',
      "reset_day for node 'node-a' must be 1..=31, got 0",
    ],
    [
      'reset_day 32',
      { reset_day: 32 },
      'nodes[0].reset_day',
      "reset_day for node 'node-a' must be 1..=31, got 32",
    ],
    ['reset_day quoted', { reset_day: '15' }, 'nodes[0].reset_day', 'got the string "15"'],
    [
      'provider_pricing_path missing',
      { provider_pricing_path: undefined },
      'nodes[0].provider_pricing_path',
      'is required',
    ],
    [
      'provider_pricing_path not a string',
      { provider_pricing_path: 5 },
      'nodes[0].provider_pricing_path',
      'must be a string',
    ],
  ])('rejects %s', (_case, overrides, at, message) => {
    const result = loadNode(overrides);
    expect(result.config).toBeUndefined();
    expect(onlyAt(result.errors, at).message).toContain(message);
  });

  it('says how to express "no limit" when rps_limit is 0', () => {
    const problem = onlyAt(loadNode({ rps_limit: 0 }).errors, 'nodes[0].rps_limit');
    expect(problem.hint).toContain('omit the key for no limit');
  });

  it('names a node without a name by its index', () => {
    const result = loadNode({ name: undefined, rps_limit: 0 });
    expect(onlyAt(result.errors, 'nodes[0].rps_limit').message).toBe(
      "RPS for node '#0' cannot be 0",
    );
  });

  it.each<[string, string, string]>([
    ['rps_limt', 'rps_limit', 'rps_limt'],
    ['max_concurent', 'max_concurrent', 'max_concurent'],
    ['provider_pricing', 'provider_pricing_path', 'provider_pricing'],
    ['Name', 'name', 'Name'],
  ])('rejects the unknown node key %s with "did you mean %s"', (key, suggestion) => {
    const result = loadNode({ [key]: 1 });
    const problem = onlyAt(result.errors, `nodes[0].${key}`);
    expect(problem.message).toBe('unknown key');
    expect(problem.hint).toBe(`did you mean '${suggestion}'?`);
  });

  it("rejects CascadeRPC's old billing_type key instead of ignoring it", () => {
    const problem = onlyAt(loadNode({ billing_type: 'credits' }).errors, 'nodes[0].billing_type');
    expect(problem.message).toBe('unknown key');
    expect(problem.hint).toContain('allowed keys: name, url');
  });

  it('rejects a table nested under a node', () => {
    const text = balancerToml({ extra: '[nodes.limits]\nrps = 1\n' });
    expect(onlyAt(load(text).errors, 'nodes[0].limits').message).toBe('unknown key');
  });
});

describe('loadConfig: monthly_limit and the spillover threshold', () => {
  function threshold(monthly: TomlFields['x'], spillover?: number): number | undefined {
    const prices = {
      'prices/basic.toml': priceListToml({
        limits: spillover === undefined ? undefined : { spillover_percent: spillover },
      }),
    };
    const result = load({ nodes: [nodeFields('a', { monthly_limit: monthly })] }, { prices });
    expect(result.errors).toEqual([]);
    return result.config?.nodes[0]?.spilloverThreshold;
  }

  it('makes monthly_limit = 0 unmetered with an infinite threshold', () => {
    const node = loadNode({ monthly_limit: 0 }).config!.nodes[0]!;
    expect(node.monthlyLimit).toBeUndefined();
    expect(node.spilloverThreshold).toBe(Infinity);
  });

  it.each<[number, number | undefined, number]>([
    [1000, undefined, 950],
    [999, undefined, 949],
    [1, undefined, 0],
    [101, 33, 33],
    [1000, 100, 1000],
    [1000, 1, 10],
    [50_000_000, 95, 47_500_000],
  ])('threshold of %d credits at %s%% is %d', (monthly, percent, expected) => {
    expect(threshold(monthly, percent)).toBe(expected);
  });

  it('computes floor(limit × percent / 100) exactly for a limit near 2^53', () => {
    const limit = Number.MAX_SAFE_INTEGER;
    const exact = Number((BigInt(limit) * 95n) / 100n);
    expect(exact).toBe(8_556_839_292_003_941);
    expect(threshold(raw(String(limit)), 95)).toBe(exact);
  });

  it('rejects a monthly_limit a number cannot hold exactly, naming the field', () => {
    const result = loadNode({ monthly_limit: raw('18446744073709551615') });
    expect(result.config).toBeUndefined();
    expect(result.errors).toEqual([
      expect.objectContaining({
        path: 'nodes[0].monthly_limit',
        message: 'must be between 0 and 9007199254740991, got 18446744073709551615',
      }),
    ]);
  });
});
