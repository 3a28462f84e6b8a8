import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { balancerToml, priceListToml } from '../../../test/support/config-files.js';
import { makeTempDir, type TempDir } from '../../../test/support/temp-dir.js';
import {
  DEFAULT_CACHE_MAX_BYTES,
  DEFAULT_CACHE_MAX_ENTRY_BYTES,
  DEFAULT_CACHE_TTL_MS,
} from './cache-section.js';
import { loadConfig } from './load-config.js';
import type { ConfigProblem, LoadResult } from './types.js';

let temp: TempDir;
beforeEach(() => {
  temp = makeTempDir('cascade-cache-');
});
afterEach(() => temp.cleanup());

function load(cache: string): LoadResult {
  temp.write({
    'config.toml': balancerToml({ extra: cache }),
    'prices/basic.toml': priceListToml(),
  });
  return loadConfig({ cwd: temp.dir, configPath: 'config.toml', env: {} });
}

function only(problems: readonly ConfigProblem[]): ConfigProblem {
  expect(problems, JSON.stringify(problems)).toHaveLength(1);
  return problems[0]!;
}

describe('[cache]', () => {
  it('is absent by default: coalescing on, cache off', () => {
    const result = load('');
    expect(result.errors).toEqual([]);
    expect(result.config?.cache).toBeUndefined();
  });

  it('applies the documented defaults to an empty [cache] (which turns the cache on)', () => {
    const result = load('[cache]\n');
    expect(result.errors).toEqual([]);
    expect(result.config?.cache).toEqual({
      enabled: true,
      coalesce: true,
      maxBytes: DEFAULT_CACHE_MAX_BYTES,
      maxEntryBytes: DEFAULT_CACHE_MAX_ENTRY_BYTES,
      ttlMs: DEFAULT_CACHE_TTL_MS,
      evmFinalityDepth: undefined,
      responseHeader: false,
      methods: new Map(),
    });
  });

  it('reads every key and per-method overrides', () => {
    const result = load(
      [
        '[cache]',
        'enabled = true',
        'coalesce = false',
        'max_bytes = 1_048_576',
        'max_entry_bytes = 4096',
        'ttl_ms = 200',
        'evm_finality_depth = 64',
        'response_header = true',
        '[cache.methods]',
        'getSlot = { ttl_ms = 100 }',
        'getEpochSchedule = { cache = "forever" }',
        'getBalance = { coalesce = false }',
        'eth_getTransactionReceipt = { cache = "final" }',
      ].join('\n'),
    );
    expect(result.errors).toEqual([]);
    const cache = result.config!.cache!;
    expect(cache).toMatchObject({
      coalesce: false,
      maxBytes: 1_048_576,
      maxEntryBytes: 4096,
      ttlMs: 200,
      evmFinalityDepth: 64,
      responseHeader: true,
    });
    expect(Object.fromEntries(cache.methods)).toEqual({
      getSlot: { ttlMs: 100 },
      getEpochSchedule: { cache: 'forever' },
      getBalance: { coalesce: false },
      eth_getTransactionReceipt: { cache: 'final' },
    });
  });

  it.each<[string, string, string, RegExp, RegExp]>([
    ['a negative bound', 'max_bytes = -1', 'cache.max_bytes', /between 0 and/, /bytes/],
    ['a quoted TTL', 'ttl_ms = "400"', 'cache.ttl_ms', /whole number/, /in ms/],
    ['a zero entry cap', 'max_entry_bytes = 0', 'cache.max_entry_bytes', /between 1/, /stored/],
    ['a typo', 'max_byte = 10', 'cache.max_byte', /unknown key/, /max_bytes/],
    ['a string switch', 'enabled = "yes"', 'cache.enabled', /true or false/, /quotes/],
    [
      'an unknown rule',
      '[cache.methods]\ngetSlot = { cache = "sometimes" }',
      'cache.methods.getSlot.cache',
      /unknown rule "sometimes"/,
      /"forever", "final", "ttl", "never"/,
    ],
    [
      '"final" for a method cascade cannot judge',
      '[cache.methods]\ngetBalance = { cache = "final" }',
      'cache.methods.getBalance.cache',
      /cannot tell when an answer of getBalance is final/,
      /getTransaction/,
    ],
    [
      'caching a write',
      '[cache.methods]\nsendTransaction = { cache = "forever" }',
      'cache.methods.sendTransaction',
      /changes state: it is never cached or coalesced/,
      /remove/,
    ],
    [
      'coalescing a write',
      '[cache.methods]\neth_sendRawTransaction = { coalesce = true }',
      'cache.methods.eth_sendRawTransaction',
      /never cached or coalesced/,
      /remove/,
    ],
    [
      'a TTL on a rule without one',
      '[cache.methods]\ngetGenesisHash = { ttl_ms = 5 }',
      'cache.methods.getGenesisHash.ttl_ms',
      /only a "ttl" rule has a TTL/,
      /cache = "ttl"/,
    ],
    [
      'an unknown method key',
      '[cache.methods]\ngetSlot = { tll_ms = 5 }',
      'cache.methods.getSlot.tll_ms',
      /unknown key/,
      /ttl_ms/,
    ],
    [
      'a method that is not a table',
      '[cache.methods]\ngetSlot = 5',
      'cache.methods.getSlot',
      /must be a table/,
      /ttl_ms = 200/,
    ],
  ])('refuses %s, naming the field', (_name, body, at, message, hint) => {
    const problem = only(load(`[cache]\n${body}`).errors);
    expect(problem.path).toBe(at);
    expect(problem.message).toMatch(message);
    expect(problem.hint).toMatch(hint);
  });
});
