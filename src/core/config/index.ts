export * from './load-config.js';
export * from './price-list.js';
export * from './types.js';
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BATCH_SIZE, isLoopback } from './server-section.js';
export { MAX_NODES } from './node-section.js';
export { substituteEnv } from './env-substitution.js';
export { redactUrl } from './redact-url.js';
export {
  describeRouting,
  methodRouting,
  shippedRouting,
  SHIPPED_LATENCY_METHODS,
  type MethodStrategy,
} from './routing-section.js';
export { KEY_NAME_PATTERN, keyHash } from './keys-section.js';
export { UNRESOLVED_SECRET } from './key-secret.js';
export { HOW_TO_PASS_A_KEY, type ClientKeyConfig, type KeysConfig } from './key-types.js';
export { KEY_USAGE_PREFIX, exposureWarning } from './key-exposure.js';
