import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  formatProblem,
  loadConfig,
  type Config,
  type LoadConfigOptions,
  type LoadResult,
} from '../core/index.js';
import type { CommandIo } from './io.js';

/** The installed package's root (configs shipped with it are found from here). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The six mock nodes the mocks and the benchmarks share. */
export const MOCK_NODES_CONFIG = 'config/balancer_config/mock_nodes.toml';
/** The demo: two chains of mock nodes (Solana at / and /solana, EVM at /eth) and one account. */
export const DEMO_CONFIG = 'config/balancer_config/demo.toml';

/** Where a command reads its config: `--config`, else CONFIG_PATH, else a shipped file. */
export function configSource(
  configPath: string | undefined,
  io: CommandIo,
  shipped?: string,
): LoadConfigOptions {
  if (configPath === undefined && shipped !== undefined) {
    return { configPath: path.join(PACKAGE_ROOT, shipped), env: io.env, cwd: PACKAGE_ROOT };
  }
  return { configPath, env: io.env, cwd: io.cwd };
}

/**
 * Loads the config or fails: every problem on its own line (with its fix), then one error
 * saying what was not done. Warnings go to `warn`.
 */
export function loadOrFail(
  options: LoadConfigOptions,
  io: CommandIo,
  notDone: string,
  warn: (line: string) => void = (line) => io.err(`warning: ${line}`),
): Config {
  const result: LoadResult = loadConfig(options);
  for (const warning of result.warnings) warn(formatProblem(warning));
  if (result.config) return result.config;
  for (const problem of result.errors) io.err(`error: ${formatProblem(problem)}`);
  throw new ConfigError(
    `${result.path}: ${result.errors.length} problem(s) in the config; ${notDone}`,
    result.errors.map(formatProblem),
    'fix them and try again (`cascade validate-config` checks a file and lists every problem)',
  );
}
