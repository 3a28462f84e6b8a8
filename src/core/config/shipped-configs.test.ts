/** Every config file the package ships must load with zero errors. */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balancerToml, nodeFields } from '../../../test/support/config-files.js';
import { REPO_ROOT } from '../../../test/support/cli-process.js';
import { makeTempDir, type TempDir } from '../../../test/support/temp-dir.js';
import { MethodRegistry } from '../protocol/method-registry.js';
import { loadConfig } from './load-config.js';
import { priceOf } from './price-list.js';
import { UNPRICED, type LoadResult, type PriceList } from './types.js';

const BALANCER_DIR = path.join(REPO_ROOT, 'config/balancer_config');
const PROVIDER_DIR = path.join(REPO_ROOT, 'config/provider_config');
const tomlFiles = (dir: string) => readdirSync(dir).filter((file) => file.endsWith('.toml'));

/** Fake keys for every variable the example configs reference. */
const FAKE_ENV: NodeJS.ProcessEnv = {
  HELIUS_API_KEY: 'fake-helius-key',
  ALCHEMY_API_KEY: 'fake-alchemy-key',
};

describe('shipped balancer configs', () => {
  it('ships the documented configs', () => {
    expect(tomlFiles(BALANCER_DIR)).toEqual(
      expect.arrayContaining(['config.example.toml', 'evm.example.toml', 'mock_nodes.toml']),
    );
  });

  it.each(tomlFiles(BALANCER_DIR))('%s loads with zero errors and zero warnings', (file) => {
    const result = loadConfig({
      cwd: REPO_ROOT,
      configPath: path.join(BALANCER_DIR, file),
      env: FAKE_ENV,
    });
    expect(result.errors).toEqual([]);
    // A config for containers binds 0.0.0.0 and requires no key yet: that warning is meant.
    const exposed = result.config?.server.host === '0.0.0.0' ? ['server.host'] : [];
    expect(result.warnings.map((w) => w.path)).toEqual(exposed);
    expect(result.config!.nodes.length).toBeGreaterThan(0);
    for (const node of result.config!.nodes) {
      for (const value of Object.values(FAKE_ENV)) expect(node.redactedUrl).not.toContain(value);
    }
  });

  it.each(['config.example.toml', 'evm.example.toml'])(
    '%s needs its API keys from the environment',
    (file) => {
      const result = loadConfig({
        cwd: REPO_ROOT,
        configPath: path.join(BALANCER_DIR, file),
        env: {},
      });
      expect(result.config).toBeUndefined();
      expect(result.errors.length).toBeGreaterThan(0);
      for (const problem of result.errors) {
        expect(problem.message).toMatch(/^env var \w+_API_KEY is required but not set/);
      }
    },
  );

  it('mock_nodes.toml matches the documented six-node topology', () => {
    const result = loadConfig({
      cwd: REPO_ROOT,
      configPath: path.join(BALANCER_DIR, 'mock_nodes.toml'),
      env: {},
    });
    const nodes = result.config!.nodes.map((node) => [
      node.name,
      node.url,
      node.tier,
      node.rpsLimit,
      node.maxConcurrent,
      node.monthlyLimit,
      node.resetDay,
      path.basename(node.pricing.path),
    ]);
    expect(nodes).toEqual([
      ['Helius-1', 'http://127.0.0.1:8891', 0, 30000, 10000, undefined, 1, 'helius.toml'],
      ['Helius-2', 'http://127.0.0.1:8892', 0, 30000, 10000, undefined, 1, 'helius.toml'],
      ['Alchemy-1', 'http://127.0.0.1:8893', 1, 25000, 7500, undefined, 1, 'alchemy.toml'],
      ['Alchemy-2', 'http://127.0.0.1:8894', 1, 25000, 7500, undefined, 1, 'alchemy.toml'],
      ['Triton-1', 'http://127.0.0.1:8895', 2, 20000, 5000, undefined, 1, 'solana.toml'],
      ['public-mirror', 'http://127.0.0.1:8896', 2, 15000, 4000, undefined, 1, 'solana.toml'],
    ]);
    expect(result.config!.server).toMatchObject({
      host: '127.0.0.1',
      port: 3000,
      enableMetrics: true,
    });
  });
});

describe('shipped provider price lists', () => {
  let temp: TempDir;
  beforeAll(() => {
    temp = makeTempDir('cascade-shipped-');
  });
  afterAll(() => temp.cleanup());

  it.each(tomlFiles(PROVIDER_DIR))('%s loads with zero errors and zero warnings', (file) => {
    const { result } = pricing(file);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.config!.nodes[0]!.pricing.path).toBe(path.join(PROVIDER_DIR, file));
  });

  /** Loads a one-node config that points at the shipped price list `file`. */
  function pricing(file: string): {
    result: LoadResult;
    list: PriceList;
    price: (method: string) => number;
  } {
    const registry = new MethodRegistry();
    temp.write({
      [`${file}.config.toml`]: balancerToml({
        nodes: [nodeFields('only', { provider_pricing_path: path.join(PROVIDER_DIR, file) })],
      }),
    });
    const result = loadConfig({
      cwd: temp.dir,
      configPath: `${file}.config.toml`,
      env: {},
      registry,
    });
    const list = result.config?.nodes[0]?.pricing as PriceList;
    return { result, list, price: (method) => priceOf(list, registry.idOf(method)) };
  }

  it('helius.toml: getBalance 1, getHealth 1, spillover 95, no fallback', () => {
    const { list, price } = pricing('helius.toml');
    expect(price('getBalance')).toBe(1);
    expect(price('getHealth')).toBe(1);
    expect(list.spilloverPercent).toBe(95);
    expect(list.unknownMethodCost).toBeUndefined();
    expect(price('getStakeMinimumDelegation')).toBe(UNPRICED);
  });

  it('alchemy.toml: getBalance 10, getHealth 20, getLargestAccounts 3000, fallback 20', () => {
    const { list, price } = pricing('alchemy.toml');
    expect(price('getBalance')).toBe(10);
    expect(price('getHealth')).toBe(20);
    expect(price('getLargestAccounts')).toBe(3000);
    expect(price('sendTransaction')).toBe(20);
    expect(list.unknownMethodCost).toBe(20);
    expect(price('anything_else')).toBe(20);
  });

  it('solana.toml: everything 1, fallback 1, default spillover 95', () => {
    const { list, price } = pricing('solana.toml');
    expect(price('getBalance')).toBe(1);
    expect(price('anything_else')).toBe(1);
    expect(list.spilloverPercent).toBe(95);
  });

  it('alchemy-evm.toml prices EVM methods under [routing]', () => {
    const { list, price } = pricing('alchemy-evm.toml');
    expect(price('eth_call')).toBe(26);
    expect(price('eth_chainId')).toBe(0);
    expect(list.named.get('eth_call')?.source).toBe('routing');
    expect(price('eth_unknownThing')).toBe(100);
  });

  it('ships the eth_getLogs range limit of the providers it prices (issue 29)', () => {
    expect(pricing('alchemy-evm.toml').list.maxLogsBlockRange).toBe(10_000);
    // Public endpoints differ: their limit is learned from their errors.
    expect(pricing('public.toml').list.maxLogsBlockRange).toBeUndefined();
  });
});
