/**
 * Mock upstream RPC nodes for the demo, the tests and the benchmarks: Solana and EVM methods
 * with realistic answers, latency, fault injection, TLS and a simulated network round trip.
 */
export type { MockBehaviour, MockFault, MockNode, MockNodeOptions, MockStats } from './types.js';
export { MOCK_FAULT_KINDS } from './types.js';
export { DEFAULT_BEHAVIOUR, MAX_RESPONSE_BYTES } from './behaviour.js';
export { MOCK_METHODS } from './rpc-responder.js';
export { startMockNode, startMockNodes } from './mock-node.js';
export { startMockProcess, stopChild, type MockProcess, type StopOptions } from './mock-process.js';
