/**
 * Compiling price lists written into a temporary directory, for the loadPriceList tests: one
 * directory and one fresh method registry per test.
 */
import { beforeEach, expect } from 'vitest';
import { MethodRegistry } from '../../src/core/protocol/method-registry.js';
import { loadPriceList, priceOf } from '../../src/core/config/price-list.js';
import { ProblemList } from '../../src/core/config/problem-list.js';
import type { ConfigProblem, PriceList } from '../../src/core/config/types.js';
import { priceListToml, type PriceListSpec } from './config-files.js';
import { useTempDir, type TempDir } from './temp-dir.js';

/** What compiling one price list gave. */
export interface Loaded {
  readonly list: PriceList | undefined;
  readonly errors: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
}

/** The current test's directory and registry, and compilers that use them. */
export interface PriceLists {
  readonly temp: TempDir;
  /** The method registry of the current test. */
  readonly registry: () => MethodRegistry;
  /** Writes a price list into the temp dir and compiles it with the test's registry. */
  readonly compile: (spec: PriceListSpec | string) => Loaded;
  /** compile(), expecting no errors. */
  readonly compiled: (spec: PriceListSpec) => PriceList;
  /** The price of `method` in `list`. */
  readonly price: (list: PriceList, method: string) => number;
}

/** Installs a temp dir and a registry per test for the calling file; see PriceLists. */
export function usePriceLists(): PriceLists {
  const temp = useTempDir('cascade-prices-');
  let current: MethodRegistry | undefined;
  beforeEach(() => {
    current = new MethodRegistry();
  });
  const registry = (): MethodRegistry => current!;
  let fileCounter = 0;
  const compile = (spec: PriceListSpec | string): Loaded => {
    const name = `list-${fileCounter++}.toml`;
    temp.write({ [name]: typeof spec === 'string' ? spec : priceListToml(spec) });
    const problems = new ProblemList();
    const list = loadPriceList(temp.path(name), name, registry(), problems);
    return { list, errors: problems.errors, warnings: problems.warnings };
  };
  return {
    temp,
    registry,
    compile,
    compiled(spec) {
      const { list, errors } = compile(spec);
      expect(errors).toEqual([]);
      return list!;
    },
    price: (list, method) => priceOf(list, registry().idOf(method)),
  };
}
