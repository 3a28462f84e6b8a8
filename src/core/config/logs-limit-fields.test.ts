/**
 * loadConfig: the eth_getLogs and heavy-read keys of issue 29 — `max_logs_block_range` and
 * `max_logs_results` in a price list's `[limits]` and a node, the client-facing
 * `[server] max_logs_block_range`, and a key's `required_filters` and `max_answer_bytes`.
 */
import { describe, expect, it } from 'vitest';
import { balancerToml, priceListToml } from '../../../test/support/config-files.js';
import { onlyAt, useConfigDir } from '../../../test/support/config-loading.js';
import { configuredBlockRange, configuredResults } from '../node/logs-limits.js';
import { keyHash } from './keys-section.js';

const { load, loadNode, loadServer } = useConfigDir();
const limits = (fields: string): string => `[limits]\n${fields}\n\n[routing]\neth_getLogs = 75\n`;

describe('loadConfig: eth_getLogs limits', () => {
  it("reads a price list's limits, and a node's over them", () => {
    const listed = load(
      {},
      {
        prices: {
          'prices/basic.toml': limits('max_logs_block_range = 2000\nmax_logs_results = 10000'),
        },
      },
    );
    expect(listed.errors).toEqual([]);
    const node = listed.config!.nodes[0]!;
    expect(configuredBlockRange(node)).toBe(2000);
    expect(configuredResults(node)).toBe(10_000);
    const own = loadNode({ max_logs_block_range: 500 });
    expect(own.errors).toEqual([]);
    expect(configuredBlockRange(own.config!.nodes[0]!)).toBe(500);
    expect(configuredBlockRange(loadNode({}).config!.nodes[0]!)).toBeUndefined();
  });

  it('refuses a bad limit, naming the field', () => {
    const zero = loadNode({ max_logs_block_range: 0 });
    expect(onlyAt(zero.errors, 'nodes[0].max_logs_block_range').message).toContain(
      'must be between 1',
    );
    const text = load({}, { prices: { 'prices/basic.toml': limits('max_logs_results = "many"') } });
    expect(onlyAt(text.errors, 'limits.max_logs_results').message).toContain(
      'must be a whole number',
    );
    const typo = load({}, { prices: { 'prices/basic.toml': limits('max_log_block_range = 10') } });
    expect(onlyAt(typo.errors, 'limits.max_log_block_range').hint).toContain(
      'max_logs_block_range',
    );
    expect(priceListToml()).toContain('[routing]');
  });

  it('reads the client-facing [server] max_logs_block_range', () => {
    const result = loadServer({ max_logs_block_range: 5000 });
    expect(result.errors).toEqual([]);
    expect(result.config!.server.chain?.maxLogsBlockRange).toBe(5000);
    const bad = loadServer({ max_logs_block_range: -1 });
    expect(onlyAt(bad.errors, 'server.max_logs_block_range').message).toContain(
      'must be between 1',
    );
  });
});

describe("loadConfig: a key's heavy-read guards", () => {
  const key = (fields: string): string =>
    `${balancerToml()}\n[[keys]]\nname = "web"\nkey_sha256 = "${keyHash('ck_test_0123456789abcdefghij')}"\n${fields}\n`;

  it('reads required_filters and max_answer_bytes', () => {
    const result = load(
      key(
        'required_filters = { eth_getLogs = ["address", "topics"], getProgramAccounts = ["dataSize"] }\nmax_answer_bytes = 5000000',
      ),
    );
    expect(result.errors).toEqual([]);
    expect(result.config!.keys!.keys[0]).toMatchObject({
      requiredFilters: { eth_getLogs: ['address', 'topics'], getProgramAccounts: ['dataSize'] },
      maxAnswerBytes: 5_000_000,
    });
  });

  it('refuses a bad guard, naming the field', () => {
    const empty = load(key('required_filters = { eth_getLogs = [] }'));
    expect(onlyAt(empty.errors, 'keys[0].required_filters.eth_getLogs').message).toContain(
      'must be a non-empty list of filter names',
    );
    const odd = load(key('required_filters = { eth_getLogs = ["a b"] }'));
    expect(onlyAt(odd.errors, 'keys[0].required_filters.eth_getLogs').message).toContain(
      "'a b' is not a filter name",
    );
    const table = load(key('required_filters = ["address"]'));
    expect(onlyAt(table.errors, 'keys[0].required_filters').message).toContain('must be a table');
    const size = load(key('max_answer_bytes = 0'));
    expect(onlyAt(size.errors, 'keys[0].max_answer_bytes').message).toContain('must be between 1');
  });
});
