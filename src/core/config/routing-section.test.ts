import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { balancerToml } from '../../../test/helpers/config-files.js';
import { makeTempDir, type TempDir } from '../../../test/helpers/temp-dir.js';
import { priceListToml } from '../../../test/helpers/config-files.js';
import { SHIPPED_WRITE_METHODS } from '../protocol/write-methods.js';
import { loadConfig } from './load-config.js';
import { SHIPPED_LATENCY_METHODS, describeRouting, methodRouting } from './routing-section.js';
import type { LoadResult } from './types.js';

let temp: TempDir;
beforeEach(() => {
  temp = makeTempDir('cascade-routing-');
});
afterEach(() => temp.cleanup());

function load(routing: string): LoadResult {
  temp.write({
    'config.toml': balancerToml({ extra: routing }),
    'prices/basic.toml': priceListToml(),
  });
  return loadConfig({ cwd: temp.dir, configPath: 'config.toml', env: {} });
}

function problemsOf(result: LoadResult): string[] {
  return result.errors.map((p) => `${p.path}: ${p.message}${p.hint ? ` — ${p.hint}` : ''}`);
}

describe('[routing]', () => {
  it('ships latency for methods a trader or wallet waits on, cost for the rest, and the write list', () => {
    const result = load('');
    expect(result.errors).toEqual([]);
    const routing = result.config!.routing!;
    expect(routing.defaultStrategy).toBe('cost');
    expect(routing.hedgeMaxShare).toBe(0.1);
    expect(routing.writeMethods).toEqual(SHIPPED_WRITE_METHODS);
    for (const method of SHIPPED_LATENCY_METHODS) {
      expect(methodRouting(routing, method).strategy).toBe('latency');
    }
    expect(methodRouting(routing, 'getBalance')).toEqual({
      strategy: 'cost',
      hedgeAfterMs: undefined,
      broadcast: 1,
    });
    expect(routing.writeMethods).not.toContain('simulateTransaction');
  });

  it('reads strategies, hedging and broadcast per method over the shipped defaults', () => {
    const result = load(`
[routing]
default_strategy = "latency"
hedge_max_share = 0.05
[routing.methods]
getLatestBlockhash = "cost"
getAccountInfo = { hedge_after_ms = 150 }
sendTransaction = { strategy = "latency", broadcast = 3 }
`);
    expect(result.errors).toEqual([]);
    const routing = result.config!.routing!;
    expect(routing.hedgeMaxShare).toBe(0.05);
    expect(methodRouting(routing, 'getLatestBlockhash').strategy).toBe('cost');
    expect(methodRouting(routing, 'getAccountInfo')).toEqual({
      strategy: 'latency',
      hedgeAfterMs: 150,
      broadcast: 1,
    });
    expect(methodRouting(routing, 'sendTransaction').broadcast).toBe(3);
    expect(methodRouting(routing, 'getSlot').strategy).toBe('latency');
    expect(describeRouting(routing, 'sendTransaction')).toEqual({
      method: 'sendTransaction',
      strategy: 'latency',
      hedge_after_ms: null,
      write: true,
      signed: true,
      broadcast: 3,
    });
    expect(describeRouting(routing, 'eth_sendTransaction')).toMatchObject({
      write: true,
      signed: false,
    });
  });

  it('lets write_methods replace the shipped list', () => {
    const result = load('[routing]\nwrite_methods = ["eth_sendRawTransaction"]');
    expect(result.config!.routing!.writeMethods).toEqual(['eth_sendRawTransaction']);
    expect(describeRouting(result.config!.routing, 'sendTransaction').write).toBe(false);
  });

  it.each([
    [
      '[routing]\ndefault_strategy = "fastest"',
      'routing.default_strategy: must be one of "cost", "latency", got the string "fastest"',
    ],
    [
      '[routing]\nhedge_max_share = 2',
      'routing.hedge_max_share: must be a number from 0 to 1, got number 2',
    ],
    [
      '[routing]\nhedge_max_shares = 0.1',
      "routing.hedge_max_shares: unknown key — did you mean 'hedge_max_share'?",
    ],
    [
      '[routing]\nwrite_methods = "sendTransaction"',
      'routing.write_methods: must be a list of method names',
    ],
    [
      '[routing.methods]\ngetSlot = 3',
      'routing.methods.getSlot: must be a strategy or a table, got number 3',
    ],
    [
      '[routing.methods]\ngetSlot = { strategy = "fast" }',
      'routing.methods.getSlot.strategy: must be one of "cost", "latency"',
    ],
    [
      '[routing.methods]\ngetSlot = { hedge_after_ms = 0 }',
      'routing.methods.getSlot.hedge_after_ms: must be between 1 and 60000, got 0',
    ],
    [
      '[routing.methods]\ngetSlot = { hedge_after = 10 }',
      "routing.methods.getSlot.hedge_after: unknown key — did you mean 'hedge_after_ms'?",
    ],
    [
      '[routing.methods]\nsendTransaction = { hedge_after_ms = 50 }',
      'routing.methods.sendTransaction.hedge_after_ms: sendTransaction is a write: it is never hedged',
    ],
    [
      '[routing.methods]\ngetSlot = { broadcast = 2 }',
      'routing.methods.getSlot.broadcast: getSlot is not a write method; broadcast applies to writes only',
    ],
    [
      '[routing.methods]\nsendTransaction = { broadcast = 65 }',
      'routing.methods.sendTransaction.broadcast: must be between 1 and 64, got 65',
    ],
  ])('refuses %j', (toml, problem) => {
    const result = load(toml);
    expect(result.config).toBeUndefined();
    expect(problemsOf(result).join('\n')).toContain(problem);
  });

  it('warns about a method name no price list knows, with a guess', () => {
    const result = load('[routing.methods]\ngetLatestBlockHash = "latency"');
    expect(result.errors).toEqual([]);
    expect(result.warnings).toContainEqual(
      expect.objectContaining({
        path: 'routing.methods.getLatestBlockHash',
        hint: "did you mean 'getLatestBlockhash'?",
      }),
    );
  });
});
