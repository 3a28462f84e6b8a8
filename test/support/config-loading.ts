/**
 * Loading balancer configs written into a temporary directory, for the loadConfig tests: one
 * directory per test, with `prices/basic.toml` beside the config unless a test overrides it.
 */
import { expect } from 'vitest';
import { loadConfig } from '../../src/core/config/load-config.js';
import type { ConfigProblem, LoadResult } from '../../src/core/config/types.js';
import {
  balancerToml,
  nodeFields,
  priceListToml,
  type BalancerConfigSpec,
} from './config-files.js';
import { useTempDir, type TempDir } from './temp-dir.js';
import type { TomlFields } from './toml.js';

/** Extra files and the environment of one load. */
export interface LoadOptions {
  readonly prices?: Readonly<Record<string, string>>;
  readonly env?: NodeJS.ProcessEnv;
}

/** The current test's directory and loaders that write into it. */
export interface ConfigDir {
  readonly temp: TempDir;
  /** Writes `config.toml` (+ `prices/basic.toml`) into the temp dir and loads it. */
  readonly load: (config: BalancerConfigSpec | string, options?: LoadOptions) => LoadResult;
  /** A config with these `[server]` fields and the default node. */
  readonly loadServer: (server: TomlFields, env?: NodeJS.ProcessEnv) => LoadResult;
  /** A config with one node `node-a` with these fields over the defaults. */
  readonly loadNode: (overrides: TomlFields, env?: NodeJS.ProcessEnv) => LoadResult;
}

/** Installs a temp dir per test for the calling file; see ConfigDir. */
export function useConfigDir(): ConfigDir {
  const temp = useTempDir('cascade-config-');
  const load = (config: BalancerConfigSpec | string, options: LoadOptions = {}): LoadResult => {
    temp.write({
      'config.toml': typeof config === 'string' ? config : balancerToml(config),
      'prices/basic.toml': priceListToml(),
      ...options.prices,
    });
    return loadConfig({ cwd: temp.dir, configPath: 'config.toml', env: options.env ?? {} });
  };
  return {
    temp,
    load,
    loadServer: (server, env = {}) => load({ server }, { env }),
    loadNode: (overrides, env = {}) => load({ nodes: [nodeFields('node-a', overrides)] }, { env }),
  };
}

/** The paths of `problems`, in order. */
export function paths(problems: readonly ConfigProblem[]): string[] {
  return problems.map((problem) => problem.path);
}

/** The one problem at `at`; fails when there is none or several. */
export function onlyAt(problems: readonly ConfigProblem[], at: string): ConfigProblem {
  const found = problems.filter((problem) => problem.path === at);
  expect(found, `problems at ${at}: ${JSON.stringify(problems)}`).toHaveLength(1);
  return found[0]!;
}
