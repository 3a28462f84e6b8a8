/** Client keys for tests: a config entry for a key text, and the keys section holding them. */
import { keyHash } from '../../src/core/config/keys-section.js';
import type { ClientKeyConfig, KeysConfig } from '../../src/core/config/key-types.js';

/** A `[[keys]]` entry for `key` (defaults: every method, no limits, reset on the 1st). */
export function clientKey(
  name: string,
  key: string,
  overrides: Partial<ClientKeyConfig> = {},
): ClientKeyConfig {
  return {
    name,
    sha256: keyHash(key),
    allow: [],
    deny: [],
    rpsLimit: undefined,
    maxConcurrent: undefined,
    monthlyCredits: undefined,
    resetDay: 1,
    origins: [],
    perIpRps: undefined,
    maxBatchSize: undefined,
    maxSubscriptions: undefined,
    params: {},
    ...overrides,
  };
}

/** The keys section of a config holding `keys`. */
export function keysOf(...keys: ClientKeyConfig[]): KeysConfig {
  return { keys, file: undefined };
}

/** The HTTP status of one JSON-RPC call of `method` (no params) posted to `url`. */
export async function callStatus(url: string, method = 'getSlot'): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
  });
  await response.text();
  return response.status;
}
