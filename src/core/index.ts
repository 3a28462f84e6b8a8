/** The surface commands use. Everything else in core is internal. */
export {
  CascadeError,
  ConfigError,
  QuotaFileError,
  StartupError,
  UsageError,
  isCascadeError,
} from './errors.js';
export {
  DEFAULT_CONFIG_PATH,
  UNPRICED,
  formatProblem,
  loadConfig,
  loadDotEnv,
  priceOf,
  priceSourceOf,
  resolveConfigPath,
  type Config,
  type ConfigProblem,
  type LoadConfigOptions,
  type LoadResult,
  type NodeConfig,
  type PriceList,
  type PriceSource,
} from './config/index.js';
export { MethodRegistry } from './protocol/method-registry.js';
