/**
 * Mock upstream RPC nodes for the demo, the tests and the benchmarks: Solana and EVM methods
 * with realistic answers, real clients' error answers (node-errors.ts), a mempool, latency,
 * fault injection, TLS, a simulated network round trip and load-balancer style idle closes.
 */
export type {
  EvmClient,
  MethodErrorSpec,
  MockBehaviour,
  MockFault,
  MockNode,
  MockNodeOptions,
  MockRpcError,
  MockStats,
} from './types.js';
export { EVM_CLIENTS, MOCK_FAULT_KINDS } from './types.js';
export { DEFAULT_BEHAVIOUR, MAX_RESPONSE_BYTES } from './behaviour.js';
export { MOCK_METHODS } from './rpc-responder.js';
export { startMockNode, startMockNodes } from './mock-node.js';
export { startMockProcess, stopChild, type MockProcess, type StopOptions } from './mock-process.js';
export { MockMempool, type AcceptedTransaction, type TransactionChain } from './mempool.js';
export {
  NODE_ERROR_NAMES,
  NODE_ERROR_PRESETS,
  nodeError,
  parseNodeErrorSpec,
} from './node-errors.js';
export type { NodeErrorPreset } from './node-error-preset.js';
export { ALREADY_KNOWN, revertData } from './evm-errors.js';
export {
  LOGS_LIMIT_SHAPES,
  limitsBlocks,
  logsLimitError,
  type LogsLimitFacts,
  type LogsLimitShape,
} from './logs-limit-errors.js';
export { ALREADY_PROCESSED } from './solana-errors.js';
export {
  DEFAULT_MOCK_CHAIN,
  MockChain,
  type ChainEvent,
  type MockChainOptions,
} from './ws/mock-chain.js';
export type { MockWsControl, MockWsFault, MockWsStats } from './ws/mock-ws-control.js';
export type { MockAccount } from './method-spec.js';
