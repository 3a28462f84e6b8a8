/**
 * undici's Client and its error classes, loaded from their own modules. cascade needs nothing
 * else of undici at run time, and the package's entry point loads all of it (fetch, WebSocket,
 * EventSource, the cache and mock agents: 110 modules), which cost every `serve` process some
 * 8 MB of memory it never used. undici publishes no `exports` map, so these paths are
 * importable; any test that sends a request fails if a later version moves them.
 */
import { createRequire } from 'node:module';
import type { Client as UndiciClient, errors as undiciErrors } from 'undici';

const load = createRequire(import.meta.url);

export const Client = load('undici/lib/dispatcher/client.js') as typeof UndiciClient;
export type Client = UndiciClient;
export const errors = load('undici/lib/core/errors.js') as typeof undiciErrors;
export type ClientOptions = UndiciClient.Options;
