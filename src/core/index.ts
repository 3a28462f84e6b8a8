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
  DEFAULT_CHAIN,
  DEFAULT_CONFIG_PATH,
  UNPRICED,
  formatProblem,
  describeRouting,
  loadConfig,
  loadDotEnv,
  priceOf,
  priceSourceOf,
  resolveConfigPath,
  type Config,
  type ConfigProblem,
  type LoadConfigOptions,
  type LoadResult,
  type MethodStrategy,
  type NodeConfig,
  type PriceList,
  type PriceSource,
  type ServerConfig,
  KEY_NAME_PATTERN,
  exposureWarning,
  isLoopback,
  KEY_USAGE_PREFIX,
  keyHash,
  UNRESOLVED_SECRET,
  type ClientKeyConfig,
} from './config/index.js';
export { chainOf, chainsOf } from './config/config-chains.js';
export { accountUsageName } from './config/accounts-section.js';
export type { AccountConfig, ChainConfig } from './config/types.js';
export { MethodRegistry } from './protocol/method-registry.js';
export { chunkCount } from './routing/logs-plan.js';
export { configuredBlockRange } from './node/logs-limits.js';
export { wsUrlOf } from './ws/ws-url.js';
export { ProxyServer, type ProxyServerOptions } from './http/server.js';
export type { HealthReport } from './http/health.js';
export type { TopologyDiff } from './routing/topology.js';
export { MONOTONIC_CLOCK, ManualClock, type Clock } from './clock.js';
export { NOOP_METRICS, type ProxyMetrics } from './metrics.js';
export { createPromMetrics } from './prom-metrics.js';
export * from './quota/index.js';
export { startAdminServer, type AdminHandlers, type AdminServer } from './http/admin-server.js';
export {
  startCascade,
  type Cascade,
  type CascadeOptions,
  type ShutdownSummary,
} from './service.js';
export type { ReloadOutcome } from './service-reload.js';
export { runCascadeWorker, type WorkerOptions } from './service-worker.js';
export {
  startCascadePrimary,
  type CascadePrimary,
  type PrimaryOptions,
  type PrimarySummary,
} from './service-primary.js';
export { readSharedKeyChanges, readSharedUsage, resetSharedUsage } from './cluster/shared-quota.js';
export { budgetField, budgetOverride, revokeField } from './keys/key-overrides.js';
export { keyChangesPath, readKeyChanges } from './keys/key-changes-file.js';
export { keyUsageName } from './keys/key-periods.js';
export {
  adminUrl,
  fetchKeys,
  fetchNodes,
  keyAction,
  setCordon,
  type AdminTarget,
} from './admin/admin-client.js';
export type { FleetWrite, KeyRow } from './admin/key-routes.js';
export type { NodeView } from './admin/node-view.js';
export type { AccountView, ChainView } from './admin/chain-views.js';
export type { AdminEvent, NodesDocument } from './admin/operator.js';
export { DEFAULT_ADMIN_TOKEN_ENV } from './config/admin-fields.js';
