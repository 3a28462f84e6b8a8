export * from './error-body.js';
export * from './method-registry.js';
export * from './method-scan.js';
export * from './rpc-request.js';
export * from './standard-methods.js';
export * from './already-known.js';
export * from './write-methods.js';
