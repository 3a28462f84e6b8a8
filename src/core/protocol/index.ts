export * from './error-body.js';
export * from './method-registry.js';
export * from './method-scan.js';
export * from './rpc-request.js';
export * from './standard-methods.js';
